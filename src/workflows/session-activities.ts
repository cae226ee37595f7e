// The activities a conversation calls, with their timeout profiles. The model step begins within the workflow
// task that asks for it (a local activity): a turn then costs the server one workflow task, not a task plus an
// activity task, and a Stop reaches it through the worker (src/activities/stop-notices.ts), not 4 heartbeats a
// second. A step that outruns the task is followed on its worker's own queue (model-steps.ts); one whose worker
// let it go runs again as the regular, heartbeating activity, as every step of a conversation begun before
// steps ran in the task does (MODEL_STEP_IN_TASK). A step is bounded by its calls' pacing (a time to the first
// piece and the longest gap between pieces: src/model/stream-pacing.ts), not by a clock on its answer: STEP_MAX
// is only a backstop.
// Tools and bookkeeping are short transactions, idempotent by call id and event key: local activities too.
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { RuntimeActivities, StepFollowActivities } from '../activities/runtime-types.ts';
import type { SessionSettings } from '../shared/messages.ts';
import { bookkeepingActivities } from './bookkeeping.ts';

/** The longest a model step may run, however long its model streams. */
const STEP_MAX = '1 hour';

export function sessionActivities(settings: Pick<SessionSettings, 'modelTimeoutMs' | 'modelMaxAttempts'>) {
  const modelRetry = {
    maximumAttempts: settings.modelMaxAttempts,
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '20s',
  };
  return {
    // handed off within seconds (MODEL_STEP_HANDOFF_AFTER): the timeout only bounds a worker without a hand-off queue
    modelInTask: proxyLocalActivities<RuntimeActivities>({
      startToCloseTimeout: settings.modelTimeoutMs,
      retry: modelRetry,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
    model: proxyActivities<RuntimeActivities>({
      startToCloseTimeout: STEP_MAX,
      heartbeatTimeout: '10s',
      retry: modelRetry,
      // Stop waits for the step to let go: it closes the model's stream, writes what streamed, and says so.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
    /** the follow-up of a step handed off on `taskQueue`, its worker's own: one attempt, as the step it waits for has */
    follow: (taskQueue: string) =>
      proxyActivities<StepFollowActivities>({
        taskQueue,
        // a worker that died with the step polls its queue no more: soon run again instead
        scheduleToStartTimeout: '15s',
        startToCloseTimeout: STEP_MAX,
        heartbeatTimeout: '10s',
        retry: { maximumAttempts: 1 },
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      }),
    tools: proxyLocalActivities<RuntimeActivities>({
      startToCloseTimeout: '30s',
      retry: { maximumAttempts: 5, initialInterval: '200ms', maximumInterval: '5s' },
    }),
    bookkeeping: bookkeepingActivities(),
    // naming the conversation is a nicety: a short bounded call whose failure costs only the default title
    titles: proxyActivities<RuntimeActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3, initialInterval: '1s' } }),
    // a summary: one model call, retried (it is written once whatever the attempt); a dead worker stops beating
    compaction: proxyActivities<RuntimeActivities>({
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '10s',
      retry: { maximumAttempts: 5, initialInterval: '1s', maximumInterval: '30s' },
    }),
  };
}

/** The patch under which a conversation's model steps run as local activities. */
export const MODEL_STEP_IN_TASK = 'model-step-in-workflow-task';

export type SessionActivities = ReturnType<typeof sessionActivities>;
