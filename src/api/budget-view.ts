// What a conversation has spent against its token budgets, for GET /v1/conversations/{id} (the web client's
// usage panel). Absent when no budget is set.
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { budgetLimits } from '../shared/turn-control.ts';

export const BudgetView = z.object({
  /** this conversation's tokens and its limit (approvals of budget items raise it) */
  conversation: z.object({ spent: z.number(), limit: z.number() }).optional(),
  /** the user's tokens today (UTC) and the daily limit */
  userDay: z.object({ spent: z.number(), limit: z.number() }).optional(),
});
export type BudgetView = z.infer<typeof BudgetView>;

export const hasBudget = (config: Pick<Config, 'TOKEN_BUDGET_PER_CONVERSATION' | 'TOKEN_BUDGET_PER_USER_PER_DAY'>) =>
  Boolean(config.TOKEN_BUDGET_PER_CONVERSATION || config.TOKEN_BUDGET_PER_USER_PER_DAY);

/** Spending against the budgets; `db` acts for the user (row-level security), `raises` from the state query. */
export async function readBudgetView(
  db: pg.ClientBase,
  config: Pick<Config, 'TOKEN_BUDGET_PER_CONVERSATION' | 'TOKEN_BUDGET_PER_USER_PER_DAY'>,
  conversationId: string,
  conversationSpent: number,
  raises: number,
): Promise<BudgetView | undefined> {
  const limits = budgetLimits({ perConversation: config.TOKEN_BUDGET_PER_CONVERSATION, perUserPerDay: config.TOKEN_BUDGET_PER_USER_PER_DAY }, { raises });
  if (!limits.conversation && !limits.userDay) return undefined;
  let today = 0;
  if (limits.userDay) {
    const { rows } = await db.query<{ spent: string }>(
      `SELECT coalesce(sum(total_tokens), 0) AS spent FROM model_usage WHERE user_id = brigade_current_user() AND created_at >= date_trunc('day', now(), 'UTC')`,
    );
    today = Number(rows[0]!.spent);
  }
  return {
    ...(limits.conversation ? { conversation: { spent: conversationSpent, limit: limits.conversation } } : {}),
    ...(limits.userDay ? { userDay: { spent: today, limit: limits.userDay } } : {}),
  };
}
