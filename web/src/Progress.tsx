import type { ProgressStep } from './transcript';
import { humanName, plainError } from './toolWords';

const STATE_WORDS: Record<string, string> = {
  started: 'in progress',
  done: 'done',
  failed: 'failed',
  skipped: 'skipped',
  stopped: 'stopped',
  todo: 'to do',
};

/**
 * A child workflow's steps as they happen (the recipe save, the brewery recommendation): `progress` events
 * of one shape (src/shared/progress.ts), index of `of`, state started, done, failed, skipped or stopped. Steps
 * that never reported are shown too: to do while it runs, skipped once a step failed or Stop ended it.
 */
export function ProgressList({
  progress,
  failureSaid = false,
}: {
  progress: Record<string, ProgressStep[]>;
  /** the run's result below says why it failed: the card shows which step, not the reason again */
  failureSaid?: boolean;
}) {
  const runs = Object.entries(progress);
  if (runs.length === 0) return null;
  return (
    <>
      {runs.map(([workflowId, reported]) => {
        const of = Math.max(reported[0]?.of ?? 0, ...reported.map((s) => s.index));
        const failure = reported.find((s) => s.state === 'failed');
        // Stop ended the run: it says so, and its steps that never ran are skipped, not still to do
        const stopped = reported.some((s) => s.state === 'stopped');
        const names = reported.find((s) => s.steps)?.steps ?? [];
        const steps: (ProgressStep | { index: number; step?: undefined; state: string; message?: undefined })[] = [];
        for (let index = 1; index <= of; index += 1)
          steps.push(reported.find((s) => s.index === index) ?? { index, state: failure || stopped ? 'skipped' : 'todo' });
        const done = steps.filter((s) => s.state === 'done').length;
        const skipped = steps.filter((s) => s.state === 'skipped').length;
        return (
          <section key={workflowId} className="progress" aria-label="Progress">
            <p>
              <strong>{failure ? 'Failed' : stopped ? 'Stopped' : done + skipped >= of ? 'Done' : 'Working…'}</strong>{' '}
              <span>
                {done} of {of} steps{skipped ? ` (${skipped} skipped)` : ''}
              </span>
            </p>
            {stopped && !failure && <p className="progress-failure">You pressed Stop; this run asks you nothing more.</p>}
            {failure && !failureSaid && (
              <p className="progress-failure">{plainError(failure.message ?? `${humanName(failure.step)} failed`)}</p>
            )}
            <progress max={of} value={done} aria-label={`${done} of ${of} steps done`} />
            <ol>
              {steps.map((s) => (
                <li key={s.index} className={`step-${s.state}`}>
                  {humanName(s.step ?? names[s.index - 1] ?? `step ${s.index}`)}: <strong>{STATE_WORDS[s.state] ?? s.state}</strong>
                  {s.message &&
                  s.state !== 'failed' &&
                  s.state !== 'stopped' &&
                  !/\bbytes\b|https?:\/\/|\bCLT-|workflow|\b[A-Z]{2,}_[A-Z_]+\b/i.test(s.message) ? (
                    <span className="muted"> — {s.message}</span>
                  ) : null}
                </li>
              ))}
            </ol>
          </section>
        );
      })}
    </>
  );
}
