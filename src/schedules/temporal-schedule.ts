// The Temporal side of a person's schedule (issue 48): a Temporal Schedule whose action starts the scheduledRun
// workflow with the schedule's id, overlap skipped (a run still going when the next is due is not doubled).
// When it runs lives here; what it sends and for whom lives in PostgreSQL (the schedules table).
import { type Client, ScheduleNotFoundError, type ScheduleSpec } from '@temporalio/client';
import type { Config } from '../config.ts';
import { SCHEDULED_RUN_WORKFLOW, type ScheduledRunInput, temporalScheduleId } from '../shared/schedules.ts';

/** When a schedule runs: every so many milliseconds, or at a cron expression's times (UTC). */
export type When = { everyMs: number; cron?: undefined } | { cron: string; everyMs?: undefined };

export const specOf = (when: When): ScheduleSpec =>
  when.cron !== undefined ? { cronExpressions: [when.cron] } : { intervals: [{ every: when.everyMs }] };

/** Temporal refused the spec (a cron expression it cannot read): the person's mistake, not the server's. */
export class BadSpecError extends Error {}

// the client turns the server's INVALID_ARGUMENT into a TypeError ("CronString does not have 5-7 fields")
const isInvalidArgument = (error: unknown) => error instanceof TypeError || (error as { code?: number }).code === 3;

export async function createTemporalSchedule(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>,
  id: string,
  when: When,
  options: { paused?: boolean } = {},
): Promise<void> {
  const args: [ScheduledRunInput] = [{ scheduleId: id }];
  try {
    await client.schedule.create({
      scheduleId: temporalScheduleId(id),
      spec: specOf(when),
      action: { type: 'startWorkflow', workflowType: SCHEDULED_RUN_WORKFLOW, taskQueue: config.TEMPORAL_TASK_QUEUE, args },
      // a run missed while Temporal was down is not made up for later, one at a time
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
      state: { paused: options.paused ?? false },
    });
  } catch (error) {
    if (isInvalidArgument(error)) throw new BadSpecError((error as Error).message);
    throw error;
  }
}

export async function updateTemporalSchedule(client: Client, id: string, when: When): Promise<void> {
  try {
    await client.schedule.getHandle(temporalScheduleId(id)).update((previous) => ({ ...previous, spec: specOf(when) }));
  } catch (error) {
    if (isInvalidArgument(error)) throw new BadSpecError((error as Error).message);
    throw error;
  }
}

export async function pauseTemporalSchedule(client: Client, id: string, paused: boolean, note?: string): Promise<void> {
  const handle = client.schedule.getHandle(temporalScheduleId(id));
  await (paused ? handle.pause(note) : handle.unpause(note));
}

/** Deletes it; one already gone is fine (a retried delete, an erasure finishing the job). */
export async function deleteTemporalSchedule(client: Client, id: string): Promise<void> {
  try {
    await client.schedule.getHandle(temporalScheduleId(id)).delete();
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
}

/** Where Temporal has it: paused (and its note), and the times of its next runs (none when paused or gone). */
export async function scheduleState(client: Client, id: string): Promise<{ paused: boolean; note?: string; next: Date[] }> {
  try {
    const { state, info } = await client.schedule.getHandle(temporalScheduleId(id)).describe();
    return state.paused
      ? { paused: true, ...(state.note ? { note: state.note } : {}), next: [] }
      : { paused: false, next: info.nextActionTimes };
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return { paused: false, next: [] };
    throw error;
  }
}

/** The shortest gap between consecutive times, or undefined with fewer than two. */
export function shortestGapMs(times: readonly Date[]): number | undefined {
  let shortest: number | undefined;
  for (let i = 1; i < times.length; i++) {
    const gap = times[i]!.getTime() - times[i - 1]!.getTime();
    shortest = shortest === undefined ? gap : Math.min(shortest, gap);
  }
  return shortest;
}
