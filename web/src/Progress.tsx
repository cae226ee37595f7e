import type { ProgressStep } from './transcript';

/** A pipeline's steps as they happen (the recipe save: `progress` events, index of `of`). */
export function ProgressList({ progress }: { progress: Record<string, ProgressStep[]> }) {
  const runs = Object.entries(progress);
  if (runs.length === 0) return null;
  return (
    <>
      {runs.map(([workflowId, steps]) => {
        const of = steps[0]?.of ?? steps.length;
        const done = steps.filter((s) => /^(done|completed|ok|succeeded)$/i.test(s.state)).length;
        const skipped = steps.filter((s) => /^skipped$/i.test(s.state)).length;
        const failed = steps.some((s) => /fail|error/i.test(s.state));
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
