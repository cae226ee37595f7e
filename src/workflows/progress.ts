// Progress events of a child workflow's steps (src/shared/progress.ts), written by the runtime's record
// activity. A report may wait for the next one (`write: false`) so both go in one write: a step's `done` is
// followed at once by the next step's `started`, so that halves the round trips and holds nothing back.
import { workflowInfo } from '@temporalio/workflow';
import type { JsonObject, NewEvent } from '../shared/messages.ts';
import type { Progress, ProgressState } from '../shared/progress.ts';
import { bookkeepingActivities } from './bookkeeping.ts';

export interface ProgressReporter<Step extends string> {
  report(step: Step, state: ProgressState, message?: string, options?: { write?: boolean }): Promise<void>;
  /** writes what waits */
  flush(): Promise<void>;
}

export function progressReporter<Step extends string>(
  { conversationId, userId }: { conversationId: string; userId: string },
  steps: readonly Step[],
): ProgressReporter<Step> {
  const { workflowId } = workflowInfo();
  const bookkeeping = bookkeepingActivities();
  let queued: NewEvent[] = [];
  const flush = async (): Promise<void> => {
    if (!queued.length) return;
    const events = queued;
    queued = [];
    await bookkeeping.record({ conversationId, userId, messages: [], events });
  };
  return {
    flush,
    async report(step, state, message, { write = true } = {}) {
      const data: Progress = {
        workflowId,
        step,
        index: steps.indexOf(step) + 1,
        of: steps.length,
        state,
        steps: [...steps],
        ...(message ? { message } : {}),
      };
      // One key per step and state: a retried record writes the event once.
      queued.push({ key: `progress:${workflowId}:${step}:${state}`, type: 'progress', data: data as JsonObject });
      if (write) await flush();
    },
  };
}
