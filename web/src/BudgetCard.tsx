// A turn over a token budget: what was spent and the limit; approve lets it go on, reject ends it. Generic:
// budgets are the runtime's, whatever the agent.
import type { PendingViewProps } from './agentHome';
import { Countdown } from './Countdown';
import { useDecision } from './useDecision';

export function BudgetCard({ item, onDecide }: PendingViewProps) {
  const { busy, error, run } = useDecision(onDecide);
  const headingId = `budget-${item.id}`;
  return (
    <article className="pending-card budget" aria-labelledby={headingId}>
      <h2 id={headingId}>Token budget reached</h2>
      {item.prompt && <p>{item.prompt}</p>}
      <Countdown expiresAt={item.expiresAt} />
      <div className="actions">
        <button type="button" disabled={busy} onClick={() => run({ pendingId: item.id, decision: 'approve' })}>
          Approve more
        </button>
        <button type="button" disabled={busy} onClick={() => run({ pendingId: item.id, decision: 'reject', reason: 'budget not raised' })}>
          Reject
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
    </article>
  );
}
