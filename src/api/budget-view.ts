// What a conversation and its user have spent against the budgets, for GET /v1/conversations/{id} (the web
// client's usage panel), from the usage ledger: every model call, in flight ones at their reservation, and
// the conversations deleted today too. Absent when no budget is set. At 80 % of a limit it carries a warning.
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { LedgerTotals } from '../db/usage-ledger.ts';
import { Usage } from '../shared/messages.ts';
import { budgetLimits, budgetSettings } from '../shared/turn-control.ts';

const Spent = z.object({ spent: z.number(), limit: z.number() });

export const Cost = z.object({ amount: z.number().nonnegative(), currency: z.string() });

/** The view's usage: its model steps' tokens, and what every model call of the conversation cost. */
export const UsageView = Usage.extend({
  /**
   * the part of inputTokens the provider read from its context cache (implicit caching of a repeated prefix, or
   * an explicit Gemini cache), as it reported it; billed at a lower rate
   */
  cachedInputTokens: z.number().int().nonnegative(),
  /** every model call of the conversation (its turns, its tools' and pipelines' calls), priced by MODEL_PRICES */
  cost: Cost,
});

/** The share of a limit from which the view warns. */
export const WARN_AT = 0.8;

export const BudgetView = z.object({
  /** this conversation's tokens and its limit (approvals of budget items raise it) */
  conversation: Spent.optional(),
  /** the user's tokens today (UTC) and the daily limit */
  userDay: Spent.optional(),
  /** the same in money (MONEY_BUDGET_*), in `currency` */
  money: z.object({ currency: z.string(), conversation: Spent.optional(), userDay: Spent.optional() }).optional(),
  /** the budget nearest its limit once one reaches 80 %: which, how far, and a sentence to show */
  warning: z
    .object({ scope: z.enum(['conversation', 'user-day']), unit: z.enum(['tokens', 'money']), percent: z.number(), text: z.string() })
    .optional(),
});
export type BudgetView = z.infer<typeof BudgetView>;

type BudgetConfig = Pick<
  Config,
  | 'TOKEN_BUDGET_PER_CONVERSATION'
  | 'TOKEN_BUDGET_PER_USER_PER_DAY'
  | 'MONEY_BUDGET_PER_CONVERSATION'
  | 'MONEY_BUDGET_PER_USER_PER_DAY'
  | 'BUDGET_CURRENCY'
>;

export const hasBudget = (config: BudgetConfig) =>
  Boolean(
    config.TOKEN_BUDGET_PER_CONVERSATION ||
    config.TOKEN_BUDGET_PER_USER_PER_DAY ||
    config.MONEY_BUDGET_PER_CONVERSATION ||
    config.MONEY_BUDGET_PER_USER_PER_DAY,
  );

/** Spending against the budgets, from the ledger's totals for the user; `raises` from the state query. */
export function budgetView(config: BudgetConfig, totals: LedgerTotals, raises: number): BudgetView | undefined {
  const limits = budgetLimits(budgetSettings(config), { raises });
  const currency = config.BUDGET_CURRENCY;
  const entry = (spent: number, limit: number | undefined) => (limit === undefined ? undefined : { spent, limit });
  const conversation = entry(totals.conversation.tokens, limits.conversation);
  const userDay = entry(totals.userDay.tokens, limits.userDay);
  const moneyConversation = entry(round(totals.conversation.cost), limits.conversationMoney);
  const moneyUserDay = entry(round(totals.userDay.cost), limits.userDayMoney);
  if (!conversation && !userDay && !moneyConversation && !moneyUserDay) return undefined;

  const candidates = [
    { scope: 'conversation', unit: 'tokens', of: conversation },
    { scope: 'user-day', unit: 'tokens', of: userDay },
    { scope: 'conversation', unit: 'money', of: moneyConversation },
    { scope: 'user-day', unit: 'money', of: moneyUserDay },
  ] as const;
  let warning: BudgetView['warning'];
  for (const { scope, unit, of } of candidates) {
    if (!of) continue;
    const share = of.spent / of.limit;
    if (share < WARN_AT || (warning && warning.percent >= share * 100)) continue;
    const percent = Math.round(share * 100);
    const what = scope === 'conversation' ? "this conversation's budget" : 'your daily budget';
    warning = { scope, unit, percent, text: share >= 1 ? `You have used all of ${what}.` : `You have used ${percent} % of ${what}.` };
  }
  return {
    ...(conversation ? { conversation } : {}),
    ...(userDay ? { userDay } : {}),
    ...(moneyConversation || moneyUserDay
      ? {
          money: {
            currency,
            ...(moneyConversation ? { conversation: moneyConversation } : {}),
            ...(moneyUserDay ? { userDay: moneyUserDay } : {}),
          },
        }
      : {}),
    ...(warning ? { warning } : {}),
  };
}

const round = (amount: number) => Math.round(amount * 1_000_000) / 1_000_000;
