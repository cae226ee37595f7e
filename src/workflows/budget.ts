// Budgets in tokens or money (TOKEN_BUDGET_*, MONEY_BUDGET_*): the model step finds a budget
// spent before it asks the model, and the turn parks on a `budget` item that says what was spent and the
// limit. Here are that item and the words the turn ends with when nobody lets it go on. Pure.
import type { PendingItem } from '../shared/messages.ts';
import { type BudgetExceeded, budgetSpentText } from '../shared/turn-control.ts';

const whose = budgetSpentText;

/** The item a turn over budget waits on: approve or reject, with what was spent and the limit. */
export function budgetItem(id: string, over: BudgetExceeded, expiresAt: string): PendingItem {
  return {
    id,
    kind: 'budget',
    tool: 'model',
    callId: id,
    args: {
      scope: over.scope,
      spent: over.spent,
      limit: over.limit,
      ...(over.unit ? { unit: over.unit, currency: over.currency ?? 'USD' } : {}),
    },
    decisions: ['approve', 'reject'],
    expiresAt,
    prompt: `${whose(over)}. Approve to let this turn go on (the conversation's budget grows by one more budget's worth), or reject to end it.`,
    details: {
      scope: over.scope,
      spent: over.spent,
      limit: over.limit,
      ...(over.unit ? { unit: over.unit, currency: over.currency ?? 'USD' } : {}),
    },
  };
}

/** What the turn says when it ends over budget: refused, or nobody decided in time. */
export function budgetRefusal(over: BudgetExceeded, timedOut: boolean, reason: string | undefined): string {
  const why = timedOut ? 'nobody raised it before the deadline' : `the budget was not raised${reason?.trim() ? ` (${reason.trim()})` : ''}`;
  return `I stopped before asking the model again: ${whose(over).replace(/^This/, 'this').replace(/^You/, 'you')}, and ${why}.`;
}
