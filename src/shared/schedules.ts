// Agents on a schedule (issue 48): what the scheduled run's workflow (src/workflows/scheduled-run.ts) and its
// activity (src/api/schedule-runs.ts) say to each other, and what a run leaves in its schedule's lastRun.
// Types and schemas only: the workflow bundle imports no I/O.
import { z } from 'zod';

/** The workflow type each schedule's Temporal Schedule starts; the name recorded histories hold, never renamed. */
export const SCHEDULED_RUN_WORKFLOW = 'scheduledRun';

/** The Temporal Schedule of schedule `id` (a row of the schedules table) */
export const temporalScheduleId = (id: string) => `brigade-schedule-${id}`;

/** What a Temporal Schedule's action starts the run with: the schedule's id only (its text stays in PostgreSQL). */
export interface ScheduledRunInput {
  scheduleId: string;
}

export interface RunScheduleInput {
  scheduleId: string;
  /** the run's workflow id: the id of the message it sends, so a retried activity sends it once */
  runKey: string;
  /** the conversation a run into a new one makes, chosen by the workflow so a retried activity makes it once */
  newConversationId: string;
}

/**
 * How a run went: `sent` (the text went into conversationId; its turn runs, or waits for the person),
 * `skipped` (reason: an open item, a running turn, a limit), `paused` (the schedule paused itself: reason),
 * `failed` (reason, in words), `gone` (the schedule was deleted meanwhile).
 */
export const RunOutcome = z.enum(['sent', 'skipped', 'paused', 'failed', 'gone']);
export const LastRun = z.object({
  at: z.string().describe('when the run began, ISO 8601'),
  outcome: RunOutcome,
  conversationId: z.uuid().optional().describe('the conversation the run sent its text into (or would have)'),
  reason: z.string().optional().describe('why it was skipped, paused or failed, in a sentence'),
});
export type LastRun = z.infer<typeof LastRun>;

/** How many times a run's activity is tried: the last attempt records a failure in lastRun rather than failing. */
export const RUN_ATTEMPTS = 3;

export interface ScheduleActivities {
  runSchedule(input: RunScheduleInput): Promise<LastRun>;
}
