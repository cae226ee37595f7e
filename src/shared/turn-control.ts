// Turn control shapes shared by the API, the workflow and the model step: what Stop answers, and how a
// model step that Stop cancelled hands back the reply it had streamed so far.
import type { ChatMessage } from './messages.ts';

export interface StopResult {
  /** whether a turn was running (or parked) and is now ended; false when the conversation was idle */
  stopped: boolean;
}

/** The message of the CancelledFailure a model step throws when Stop cancelled it; its details carry StoppedStep. */
export const STEP_STOPPED = 'STEP_STOPPED';

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
}

/** What a model step is told about budgets beyond the settings: approvals so far and this turn's. */
export interface BudgetAllowance {
  /** approved budget items in this conversation: each adds one TOKEN_BUDGET_PER_CONVERSATION */
  raises: number;
  /** a budget item was approved in this turn: no budget holds the rest of the turn back */
  approvedThisTurn?: boolean;
}

/** The effective limits for a conversation, given the settings and its approvals. */
export function budgetLimits(
  settings: { perConversation?: number; perUserPerDay?: number },
  allowance: BudgetAllowance,
): { conversation?: number; userDay?: number } {
  if (allowance.approvedThisTurn) return {};
  return {
    ...(settings.perConversation ? { conversation: settings.perConversation * (1 + allowance.raises) } : {}),
    ...(settings.perUserPerDay ? { userDay: settings.perUserPerDay } : {}),
  };
}

/** What the model is told after a reply the user stopped, so it knows the answer was cut short. */
export const STOPPED_NOTE = '[The user pressed Stop here: this reply was cut short and is incomplete.]';
