// One run of a person's schedule (issue 48), started by its Temporal Schedule: one activity that sends the
// schedule's text into a conversation (src/api/schedule-runs.ts). A workflow of its own so each run is
// visible in the Web UI and the Schedule's overlap policy (skip) sees it; the ids it hands the activity come
// from here, so that a retried activity sends once and makes one conversation.
import { proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import { type LastRun, RUN_ATTEMPTS, type ScheduleActivities, type ScheduledRunInput } from '../shared/schedules.ts';

const { runSchedule } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: RUN_ATTEMPTS, initialInterval: '5s' },
});

export async function scheduledRun({ scheduleId }: ScheduledRunInput): Promise<LastRun> {
  return runSchedule({ scheduleId, runKey: workflowInfo().workflowId, newConversationId: uuid4() });
}
