// A pending item of a kind no home renders: what it asks, its arguments, its deadline, and a button for each
// decision that needs nothing more than a click.
import type { PendingViewProps } from './agentHome';
import { Countdown } from './Countdown';
import { useDecision } from './useDecision';

export function FallbackPendingCard({ item, onDecide }: PendingViewProps) {
  const { busy, error, run } = useDecision(onDecide);
  const headingId = `pending-${item.id}`;
  // an edit needs arguments, which only a view that knows the kind can ask for
  const decisions = item.decisions.filter((d) => d !== 'edit');
  return (
    <article className="pending-card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {item.prompt ?? (
          <>
            Decide on <code>{item.tool}</code>
          </>
        )}
      </h2>
      <dl className="args">
        {Object.entries(item.args).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
          </div>
        ))}
      </dl>
      <Countdown expiresAt={item.expiresAt} label="Decide within" />
      {error && (
        <p role="alert" className="banner error">
          {error.message}
        </p>
      )}
      <div className="actions">
        {decisions.map((decision) => (
          <button
            key={decision}
            type="button"
            className={decision === 'reject' || decision === 'no' ? 'danger' : undefined}
            disabled={busy}
            onClick={() => run({ pendingId: item.id, decision })}
          >
            {decision[0]!.toUpperCase()}
            {decision.slice(1)}
          </button>
        ))}
      </div>
    </article>
  );
}
