// The activities a conversation calls, with their timeout profiles. The model may stream for a while: a regular
// activity, heartbeating, retried a bounded number of times. Tools and bookkeeping are short transactions,
// idempotent by call id and event key: local activities, run within the workflow task that asks for them
// instead of costing a task round trip each.
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { RuntimeActivities } from '../activities/runtime-types.ts';
import type { SessionSettings } from '../shared/messages.ts';
import { bookkeepingActivities } from './bookkeeping.ts';

export function sessionActivities(settings: Pick<SessionSettings, 'modelTimeoutMs' | 'modelMaxAttempts'>) {
  return {
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

export type SessionActivities = ReturnType<typeof sessionActivities>;
