import type { ProgressStep } from './transcript';

/**
 * A child workflow's steps as they happen (the recipe save, the brewery recommendation): `progress` events
 * of one shape (src/shared/progress.ts), index of `of`, state started, done, failed or skipped.
 */
export function ProgressList({ progress }: { progress: Record<string, ProgressStep[]> }) {
  const runs = Object.entries(progress);
  if (runs.length === 0) return null;
  return (
    <>
      {runs.map(([workflowId, steps]) => {
        const of = steps[0]?.of ?? steps.length;
        const done = steps.filter((s) => s.state === 'done').length;
        const skipped = steps.filter((s) => s.state === 'skipped').length;
        const failed = steps.some((s) => s.state === 'failed');
        return (
          <section key={workflowId} className="progress" aria-label={`Progress of ${workflowId}`}>
            <p>
              <strong>{failed ? 'Failed' : done + skipped >= of ? 'Done' : 'Working'}</strong>{' '}
              <span>
                {done} of {of} steps{skipped ? ` (${skipped} skipped)` : ''}
              </span> <span className="muted">{workflowId}</span>
            </p>
            <progress max={of} value={done} aria-label={`${done} of ${of} steps done`} />
            <ol>
              {steps.map((s) => (
                <li key={s.index} className={`step-${s.state}`}>
                  {s.index}/{s.of} {s.step}: <strong>{s.state}</strong>{s.message ? <span className="muted"> — {s.message}</span> : null}
                </li>
              ))}
            </ol>
          </section>
        );
      })}
    </>
  );
}
