// Agents on a schedule (issue 48): POST/GET/PATCH/DELETE /v1/schedules. A schedule sends the same text to an
// agent every so often (`every`, a duration) or at a cron expression's times (UTC), into a new conversation per run
// or into one of the person's conversations. Its row (src/db/schedules.ts) says what and whose; its Temporal
// Schedule (src/schedules/temporal-schedule.ts) says when, and starts each run (src/api/schedule-runs.ts).
// Another user's schedule is a 404 like a missing one (row-level security).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { findConversation } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import {
  type ScheduleRow,
  countSchedulesLocked,
  deleteSchedule,
  findSchedule,
  insertSchedule,
  listSchedules,
  updateSchedule,
} from '../db/schedules.ts';
import {
  BadSpecError,
  type When,
  createTemporalSchedule,
  deleteTemporalSchedule,
  scheduleState,
  pauseTemporalSchedule,
  shortestGapMs,
  updateTemporalSchedule,
} from '../schedules/temporal-schedule.ts';
import { duration } from '../shared/duration.ts';
import { SendMessageInput } from '../shared/messages.ts';
import { isStorableText, UNSTORABLE_MESSAGE } from '../shared/safe-text.ts';
import { LastRun } from '../shared/schedules.ts';
import type { ServerCatalog } from './agent-server.ts';
import { principalOf } from './auth.ts';
import type { ConversationAccess } from './conversation-access.ts';
import { HttpError, parseBody } from './http-error.ts';

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** Milliseconds as the shortest duration string that says them exactly: 10s, 15m, 7d, 1500ms. */
export function durationText(ms: number): string {
  for (const [unit, size] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

const Every = duration.describe('how often it runs: a duration such as 30s, 15m, 24h or 7d (or milliseconds)');
const Cron = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine(isStorableText, UNSTORABLE_MESSAGE)
  .describe('when it runs: a cron expression, UTC (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1")');

const oneOf = (body: { every?: unknown; cron?: unknown }, ctx: z.RefinementCtx, required: boolean) => {
  if (body.every !== undefined && body.cron !== undefined)
    ctx.addIssue({ code: 'custom', path: ['every'], message: 'give either every or cron, not both' });
  else if (required && body.every === undefined && body.cron === undefined)
    ctx.addIssue({ code: 'custom', path: ['every'], message: 'give every (a duration such as 15m) or cron' });
};

/** The longest interval: a year and a day, so a yearly schedule fits and a number too large for the row does not. */
const LONGEST_MS = 366 * 86_400_000;

const atLeast = (config: Pick<Config, 'SCHEDULE_MIN_INTERVAL'>) => (body: { every?: number }, ctx: z.RefinementCtx) => {
  if (body.every === undefined) return;
  if (body.every < config.SCHEDULE_MIN_INTERVAL)
    ctx.addIssue({ code: 'custom', path: ['every'], message: `must be at least ${durationText(config.SCHEDULE_MIN_INTERVAL)}` });
  else if (body.every > LONGEST_MS || !Number.isInteger(body.every))
    ctx.addIssue({ code: 'custom', path: ['every'], message: `must be a whole number of milliseconds up to ${durationText(LONGEST_MS)}` });
};

export const createScheduleBody = (catalog: Pick<ServerCatalog, 'names'>, config: Pick<Config, 'SCHEDULE_MIN_INTERVAL'>) =>
  z
    .strictObject({
      agent: z.enum(catalog.names() as [string, ...string[]]),
      text: SendMessageInput.shape.text.describe('the message each run sends, as the owner'),
      every: Every.optional(),
      cron: Cron.optional(),
      conversationId: z.uuid().optional().describe("one of the caller's conversations to send into; none: a new conversation per run"),
    })
    .superRefine((body, ctx) => oneOf(body, ctx, true))
    .superRefine(atLeast(config));

export const patchScheduleBody = (config: Pick<Config, 'SCHEDULE_MIN_INTERVAL'>) =>
  z
    .strictObject({
      paused: z.boolean().optional().describe('pause (true) or resume (false); resuming clears the reason it paused itself for'),
      every: Every.optional(),
      cron: Cron.optional(),
    })
    .superRefine((body, ctx) => {
      oneOf(body, ctx, false);
      if (body.paused === undefined && body.every === undefined && body.cron === undefined)
        ctx.addIssue({ code: 'custom', path: [], message: 'give paused, every or cron' });
    })
    .superRefine(atLeast(config));

export const ScheduleView = z.object({
  id: z.uuid(),
  agent: z.string(),
  text: z.string(),
  every: z.string().nullable().describe('how often it runs (a duration such as 15m), or null with cron'),
  cron: z.string().nullable().describe('when it runs (UTC), or null with every'),
  conversationId: z.uuid().nullable().describe('the conversation it sends into; null: a new one per run'),
  paused: z.boolean(),
  pausedReason: z
    .string()
    .nullable()
    .describe(
      "why it paused itself (its owner disabled, gone, or without the agent's role; its conversation deleted); or that it was paused in Temporal itself; null when not paused, or paused by the person",
    ),
  nextRunAt: z.string().nullable().describe('the next run, ISO 8601; null while paused'),
  lastRun: LastRun.nullable().describe('the latest run: sent (with its conversation), skipped, paused or failed, with the reason'),
  createdAt: z.string(),
});
export const ScheduleList = z.object({ schedules: z.array(ScheduleView) });

const noSuchSchedule = () => new HttpError(404, 'No such schedule');

export interface ScheduleDeps {
  catalog: ServerCatalog;
  access: ConversationAccess;
  config: Config;
  client: Client;
  pool: pg.Pool;
}

export function scheduleRoutes({ catalog, access, config, client, pool }: ScheduleDeps): Router {
  const router = Router();
  const CreateBody = createScheduleBody(catalog, config);
  const PatchBody = patchScheduleBody(config);

  const view = async (row: ScheduleRow) => {
    const temporal = row.paused ? { paused: true, next: [] } : await scheduleState(client, row.id);
    // paused in Temporal itself (an operator in the Web UI): the list says so rather than showing no next run
    const pausedThere = !row.paused && temporal.paused;
    return {
      id: row.id,
      agent: row.agent,
      text: row.text,
      every: row.everyMs === null ? null : durationText(row.everyMs),
      cron: row.cron,
      conversationId: row.conversationId,
      paused: row.paused || temporal.paused,
      pausedReason: pausedThere ? 'Paused in Temporal (by an operator).' : row.pausedReason,
      nextRunAt: temporal.next[0]?.toISOString() ?? null,
      lastRun: row.lastRun,
      createdAt: row.createdAt.toISOString(),
    };
  };

  /** A cron whose runs come closer together than the minimum is refused once Temporal has said when they come. */
  const refuseFrequentCron = async (id: string, when: When) => {
    if (when.cron === undefined) return;
    const gap = shortestGapMs((await scheduleState(client, id)).next);
    if (gap !== undefined && gap < config.SCHEDULE_MIN_INTERVAL)
      throw new HttpError(
        400,
        `cron: runs ${durationText(gap)} apart; they must be at least ${durationText(config.SCHEDULE_MIN_INTERVAL)} apart`,
        { fields: [{ field: 'cron', message: `must run at most every ${durationText(config.SCHEDULE_MIN_INTERVAL)}` }] },
      );
  };
  const badSpec = (error: unknown) => {
    if (!(error instanceof BadSpecError)) return error;
    const message = 'is not a cron expression Temporal can read (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1")';
    return new HttpError(400, `cron: ${message}`, { fields: [{ field: 'cron', message }] });
  };

  router.post('/schedules', async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(CreateBody, req.body);
    access.requireAgentRole(principal, body.agent);
    const when: When = body.cron !== undefined ? { cron: body.cron } : { everyMs: body.every! };
    const id = randomUUID();
    const row = await asUser(pool, principal.user, async (db) => {
      const count = await countSchedulesLocked(db, principal.user);
      if (count >= config.SCHEDULE_MAX_PER_USER)
        throw new HttpError(409, `You have ${count} schedules, the most one person may have; delete one first`);
      if (body.conversationId !== undefined) {
        const conversation = await findConversation(db, body.conversationId);
        const fields = (message: string) => ({ fields: [{ field: 'conversationId', message }] });
        if (!conversation)
          throw new HttpError(400, 'conversationId: no such conversation of yours', fields('no such conversation of yours'));
        if (conversation.agent !== body.agent)
          throw new HttpError(
            400,
            `conversationId: that conversation is the ${conversation.agent} agent's, not the ${body.agent} agent's`,
            fields("another agent's conversation"),
          );
        access.requireClientAccess(principal, conversation.agent, conversation.client);
      }
      const inserted = await insertSchedule(db, {
        id,
        userId: principal.user,
        agent: body.agent,
        text: body.text,
        ...(when.cron !== undefined ? { cron: when.cron } : { everyMs: when.everyMs }),
        ...(body.conversationId ? { conversationId: body.conversationId } : {}),
      });
      // inside the row's transaction: a Schedule Temporal refuses (or a cron too frequent) rolls the row back
      await createTemporalSchedule(client, config, id, when).catch((error: unknown) => {
        throw badSpec(error);
      });
      try {
        await refuseFrequentCron(id, when);
      } catch (error) {
        await deleteTemporalSchedule(client, id);
        throw error;
      }
      return inserted;
    });
    res.status(201).json(await view(row));
  });

  router.get('/schedules', async (_req, res) => {
    const principal = principalOf(res);
    const rows = await asUser(pool, principal.user, (db) => listSchedules(db));
    res.json({ schedules: await Promise.all(rows.map(view)) });
  });

  router.patch('/schedules/:id', async (req, res) => {
    const principal = principalOf(res);
    const id = String(req.params.id);
    const body = parseBody(PatchBody, req.body);
    const row = await asUser(pool, principal.user, async (db) => {
      const before = await findSchedule(db, id);
      if (!before) throw noSuchSchedule();
      // resuming acts for the person now: their role for the agent is checked again
      if (body.paused === false) access.requireAgentRole(principal, before.agent);
      const when: When | undefined =
        body.cron !== undefined ? { cron: body.cron } : body.every !== undefined ? { everyMs: body.every } : undefined;
      const after = (await updateSchedule(db, id, {
        ...(when?.cron !== undefined ? { cron: when.cron } : {}),
        ...(when?.everyMs !== undefined ? { everyMs: when.everyMs } : {}),
        ...(body.paused !== undefined ? { paused: body.paused } : {}),
      }))!;
      if (when) {
        await updateTemporalSchedule(client, id, when).catch((error: unknown) => {
          throw badSpec(error);
        });
        await refuseFrequentCron(id, when).catch(async (error: unknown) => {
          // the row rolls back; Temporal's Schedule goes back to what it was
          await updateTemporalSchedule(client, id, before.cron !== null ? { cron: before.cron } : { everyMs: before.everyMs! });
          throw error;
        });
      }
      // always, not only when the row changes: a Schedule paused in Temporal itself is resumed by the owner too
      if (body.paused !== undefined)
        await pauseTemporalSchedule(client, id, body.paused, body.paused ? 'paused by its owner' : 'resumed by its owner');
      return after;
    });
    res.json(await view(row));
  });

  router.delete('/schedules/:id', async (req, res) => {
    const principal = principalOf(res);
    const id = String(req.params.id);
    await asUser(pool, principal.user, async (db) => {
      if (!(await findSchedule(db, id))) throw noSuchSchedule();
      // the Schedule first: a failure leaves the row, so a retried DELETE finishes the job
      await deleteTemporalSchedule(client, id);
      await deleteSchedule(db, id);
    });
    res.status(204).end();
  });

  return router;
}
