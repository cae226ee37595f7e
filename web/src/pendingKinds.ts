// How the client shows a pending item of each kind: approvals and budgets are generic (any agent's turn may need one),
// the other kinds belong to the agent that opens them, and a kind nobody renders gets the fallback card.
import { ApprovalCard } from './ApprovalCard';
import { BudgetCard } from './BudgetCard';
import type { PendingKindHome } from './agentHome';
import { pendingKindFor } from './agents/registry';
import { FallbackPendingCard } from './FallbackPendingCard';

const GENERIC = new Map<string, PendingKindHome>([
  ['approval', { View: ApprovalCard, label: 'Approval' }],
  ['budget', { View: BudgetCard, label: 'Token budget' }],
]);

export function pendingKind(kind: string): PendingKindHome {
  return GENERIC.get(kind) ?? pendingKindFor(kind) ?? { View: FallbackPendingCard, label: kind };
}
