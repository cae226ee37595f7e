// The activities a conversation calls, with their timeout profiles. The model step runs within the workflow
// task that asks for it (a local activity): a turn then costs the server one workflow task, not a task plus an
// activity task, and a Stop reaches it through the worker (src/activities/stop-notices.ts), not 4 heartbeats a
// second. Conversations begun before that keep the regular, heartbeating activity (MODEL_STEP_IN_TASK).
// Tools and bookkeeping are short transactions, idempotent by call id and event key: local activities too.
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { RuntimeActivities } from '../activities/runtime-types.ts';
import type { SessionSettings } from '../shared/messages.ts';
import { bookkeepingActivities } from './bookkeeping.ts';

export function sessionActivities(settings: Pick<SessionSettings, 'modelTimeoutMs' | 'modelMaxAttempts'>) {
  return {
    modelInTask: proxyLocalActivities<RuntimeActivities>({
      startToCloseTimeout: settings.modelTimeoutMs,
      retry: { maximumAttempts: settings.modelMaxAttempts, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s' },
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
    model: proxyActivities<RuntimeActivities>({
      startToCloseTimeout: settings.modelTimeoutMs,
      heartbeatTimeout: Math.min(settings.modelTimeoutMs, 10_000),
      retry: { maximumAttempts: settings.modelMaxAttempts, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s' },
      // Stop waits for the step to let go: it closes the model's stream, writes what streamed, and says so.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
    tools: proxyLocalActivities<RuntimeActivities>({
      startToCloseTimeout: '30s',
      retry: { maximumAttempts: 5, initialInterval: '200ms', maximumInterval: '5s' },
    }),
    bookkeeping: bookkeepingActivities(),
    // naming the conversation is a nicety: a short bounded call whose failure costs only the default title
    titles: proxyActivities<RuntimeActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3, initialInterval: '1s' } }),
  };
}

/** The patch under which a conversation's model steps run as local activities. */
export const MODEL_STEP_IN_TASK = 'model-step-in-workflow-task';

export type SessionActivities = ReturnType<typeof sessionActivities>;
