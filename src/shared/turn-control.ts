// Turn control shapes shared by the API, the workflow and the model step: what Stop answers, and how a
// model step that Stop cancelled hands back the reply it had streamed so far.
import type { ChatMessage } from './messages.ts';

export interface StopResult {
  /** whether a turn was running (or parked) and is now ended; false when the conversation was idle */
  stopped: boolean;
}

/** The message of the CancelledFailure a model step throws when Stop cancelled it; its details carry StoppedStep. */
export const STEP_STOPPED = 'STEP_STOPPED';

/** The failure type of a model step whose worker let it go (shut down, or the step is gone): run it again. */
export const STEP_LOST = 'ModelStepLost';

/** What a stopped model step wrote before it let go: its earlier replies and tool results, and the cut reply. */
export interface StoppedStep {
  before: ChatMessage[];
  partial?: ChatMessage;
}

/** A budget a model step found spent before it asked the model: which, what was spent and the limit. */
export interface BudgetExceeded {
  scope: 'conversation' | 'user-day';
  spent: number;
  limit: number;
  /** absent: tokens; `money`: spent and limit are amounts in `currency` */
  unit?: 'money';
  currency?: string;
}

/** What a model step is told about budgets beyond the settings: approvals so far and this turn's. */
export interface BudgetAllowance {
  /** approved budget items in this conversation: each adds one conversation budget (tokens and money) */
  raises: number;
  /** a budget item was approved in this turn: no budget holds the rest of the turn back */
  approvedThisTurn?: boolean;
}

export interface BudgetSettings {
  perConversation?: number;
  perUserPerDay?: number;
  moneyPerConversation?: number;
  moneyPerUserPerDay?: number;
}

/** The budget settings (TOKEN_BUDGET_*, MONEY_BUDGET_*) as BudgetSettings. */
export const budgetSettings = (config: {
  TOKEN_BUDGET_PER_CONVERSATION?: number | undefined;
  TOKEN_BUDGET_PER_USER_PER_DAY?: number | undefined;
  MONEY_BUDGET_PER_CONVERSATION?: number | undefined;
  MONEY_BUDGET_PER_USER_PER_DAY?: number | undefined;
}): BudgetSettings => ({
  ...(config.TOKEN_BUDGET_PER_CONVERSATION ? { perConversation: config.TOKEN_BUDGET_PER_CONVERSATION } : {}),
  ...(config.TOKEN_BUDGET_PER_USER_PER_DAY ? { perUserPerDay: config.TOKEN_BUDGET_PER_USER_PER_DAY } : {}),
  ...(config.MONEY_BUDGET_PER_CONVERSATION ? { moneyPerConversation: config.MONEY_BUDGET_PER_CONVERSATION } : {}),
  ...(config.MONEY_BUDGET_PER_USER_PER_DAY ? { moneyPerUserPerDay: config.MONEY_BUDGET_PER_USER_PER_DAY } : {}),
});

export interface BudgetLimits {
  conversation?: number;
  userDay?: number;
  conversationMoney?: number;
  userDayMoney?: number;
}

/** The effective limits for a conversation, given the settings and its approvals. */
export function budgetLimits(settings: BudgetSettings, allowance: BudgetAllowance): BudgetLimits {
  if (allowance.approvedThisTurn) return {};
  return {
    ...(settings.perConversation ? { conversation: settings.perConversation * (1 + allowance.raises) } : {}),
    ...(settings.perUserPerDay ? { userDay: settings.perUserPerDay } : {}),
    ...(settings.moneyPerConversation ? { conversationMoney: settings.moneyPerConversation * (1 + allowance.raises) } : {}),
    ...(settings.moneyPerUserPerDay ? { userDayMoney: settings.moneyPerUserPerDay } : {}),
  };
}

const tokens = (n: number) => n.toLocaleString('en-US');
const money = (n: number, currency = 'USD') => `${currency} ${n.toFixed(n < 1 ? 4 : 2)}`;

/** What was spent of which budget, in words: "This conversation has used …" or "You have used … today, …". */
export function budgetSpentText(over: BudgetExceeded): string {
  if (over.unit === 'money') {
    return over.scope === 'conversation'
      ? `This conversation has spent ${money(over.spent, over.currency)} of its ${money(over.limit, over.currency)} budget`
      : `You have spent ${money(over.spent, over.currency)} today, your daily budget is ${money(over.limit, over.currency)}`;
  }
  return over.scope === 'conversation'
    ? `This conversation has used ${tokens(over.spent)} tokens of its ${tokens(over.limit)}-token budget`
    : `You have used ${tokens(over.spent)} tokens today, your daily budget is ${tokens(over.limit)}`;
}

export const anyLimit = (limits: BudgetLimits) =>
  limits.conversation !== undefined ||
  limits.userDay !== undefined ||
  limits.conversationMoney !== undefined ||
  limits.userDayMoney !== undefined;

/** What the model is told after a reply the user stopped, so it knows the answer was cut short. */
export const STOPPED_NOTE = '[The user pressed Stop here: this reply was cut short and is incomplete.]';
