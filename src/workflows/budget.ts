// Token budgets (TOKEN_BUDGET_PER_CONVERSATION, TOKEN_BUDGET_PER_USER_PER_DAY): the model step finds a budget
// spent before it asks the model, and the turn parks on a `budget` item that says what was spent and the
// limit. Here are that item and the words the turn ends with when nobody lets it go on. Pure.
import type { PendingItem } from '../shared/messages.ts';
import type { BudgetExceeded } from '../shared/turn-control.ts';

const whose = (over: BudgetExceeded) =>
  over.scope === 'conversation'
    ? `This conversation has used ${over.spent.toLocaleString('en-US')} tokens of its ${over.limit.toLocaleString('en-US')}-token budget`
    : `You have used ${over.spent.toLocaleString('en-US')} tokens today, your daily budget is ${over.limit.toLocaleString('en-US')}`;

/** The item a turn over budget waits on: approve or reject, with what was spent and the limit. */
export function budgetItem(id: string, over: BudgetExceeded, expiresAt: string): PendingItem {
  return {
    id,
    kind: 'budget',
    tool: 'model',
    callId: id,
    args: { scope: over.scope, spent: over.spent, limit: over.limit },
    decisions: ['approve', 'reject'],
    expiresAt,
    prompt: `${whose(over)}. Approve to let this turn go on (the conversation's budget grows by one more budget's worth), or reject to end it.`,
    details: { scope: over.scope, spent: over.spent, limit: over.limit },
  };
}

/** What the turn says when it ends over budget: refused, or nobody decided in time. */
export function budgetRefusal(over: BudgetExceeded, timedOut: boolean, reason: string | undefined): string {
  const why = timedOut ? 'nobody raised it before the deadline' : `the budget was not raised${reason?.trim() ? ` (${reason.trim()})` : ''}`;
  return `I stopped before asking the model again: ${whose(over).replace(/^This/, 'this').replace(/^You/, 'you')}, and ${why}.`;
}
