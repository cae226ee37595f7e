// A person's schedules (issue 48; 051_schedules.sql): what each sends, to which agent and where. Every function
// but scheduleForRun runs in a transaction as the owner (asUser), so row-level security keeps it to their rows.
import type pg from 'pg';
import type { LastRun } from '../shared/schedules.ts';

export interface ScheduleRow {
  id: string;
  agent: string;
  text: string;
  everyMs: number | null;
  cron: string | null;
  conversationId: string | null;
  paused: boolean;
  pausedReason: string | null;
  lastRun: LastRun | null;
  createdAt: Date;
}

const COLUMNS = `id, agent, text, every_ms::float8 AS "everyMs", cron, conversation_id AS "conversationId", paused,
  paused_reason AS "pausedReason", last_run AS "lastRun", created_at AS "createdAt"`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function listSchedules(db: pg.ClientBase): Promise<ScheduleRow[]> {
  return (await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules ORDER BY created_at, id`)).rows;
}

/** Row-level security hides other users' rows, so "not yours" and "not there" look the same. */
export async function findSchedule(db: pg.ClientBase, id: string): Promise<ScheduleRow | undefined> {
  if (!UUID.test(id)) return undefined;
  return (await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE id = $1 FOR UPDATE`, [id])).rows[0];
}

/**
 * How many schedules `userId` has, counted after taking a lock of theirs for the rest of the transaction, so
 * two requests at once cannot both pass the cap.
 */
export async function countSchedulesLocked(db: pg.ClientBase, userId: string): Promise<number> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('brigade.schedules:' || $1, 0))", [userId]);
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules')).rows[0]!.n;
}

export async function insertSchedule(
  db: pg.ClientBase,
  row: { id: string; userId: string; agent: string; text: string; everyMs?: number; cron?: string; conversationId?: string },
): Promise<ScheduleRow> {
  const { rows } = await db.query<ScheduleRow>(
    `INSERT INTO schedules (id, user_id, agent, text, every_ms, cron, conversation_id) VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING ${COLUMNS}`,
    [row.id, row.userId, row.agent, row.text, row.everyMs ?? null, row.cron ?? null, row.conversationId ?? null],
  );
  return rows[0]!;
}

/** A new interval or cron (the other cleared), and/or paused; resuming clears the reason it paused itself for. */
export async function updateSchedule(
  db: pg.ClientBase,
  id: string,
  change: { everyMs?: number; cron?: string; paused?: boolean },
): Promise<ScheduleRow | undefined> {
  const when = change.everyMs !== undefined || change.cron !== undefined;
  const { rows } = await db.query<ScheduleRow>(
    `UPDATE schedules SET
       every_ms = CASE WHEN $2 THEN $3::bigint ELSE every_ms END,
       cron = CASE WHEN $2 THEN $4::text ELSE cron END,
       paused = coalesce($5, paused),
       paused_reason = CASE WHEN $5 IS NULL THEN paused_reason ELSE NULL END
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, when, change.everyMs ?? null, change.cron ?? null, change.paused ?? null],
  );
  return rows[0];
}

export async function deleteSchedule(db: pg.ClientBase, id: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  return ((await db.query('DELETE FROM schedules WHERE id = $1', [id])).rowCount ?? 0) > 0;
}

/**
 * Whether the schedule is still there, holding it until the transaction ends: a run that makes a conversation
 * does so under this lock, so a delete (the person's, an erasure's) comes either before (the run makes nothing)
 * or after (and an erasure then erases that conversation too).
 */
export async function holdSchedule(db: pg.ClientBase, id: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM schedules WHERE id = $1 FOR SHARE', [id])).rowCount === 1;
}

/** A run's outcome; with `pausedReason`, the schedule paused itself for it. */
export async function recordRun(db: pg.ClientBase, id: string, lastRun: LastRun, pausedReason?: string): Promise<void> {
  await db.query(
    `UPDATE schedules SET last_run = $2,
       paused = paused OR $3::text IS NOT NULL, paused_reason = coalesce($3::text, paused_reason)
     WHERE id = $1`,
    [id, JSON.stringify(lastRun), pausedReason ?? null],
  );
}

export interface ScheduleForRun {
  userId: string;
  agent: string;
  text: string;
  conversationId: string | null;
  paused: boolean;
  roles: string[];
  client: string | null;
  /** why its owner may not act now, as a personal API key would be refused */
  refused: string | null;
}

/** The schedule a run is for, whoever's it is, and its owner's standing (the worker does not know the owner). */
export async function scheduleForRun(pool: pg.Pool, id: string, unseenMs: number): Promise<ScheduleForRun | undefined> {
  const { rows } = await pool.query<ScheduleForRun>(
    `SELECT user_id AS "userId", agent, text, conversation_id AS "conversationId", paused, roles, client, refused
       FROM brigade_schedule_for_run($1, make_interval(secs => $2))`,
    [id, unseenMs / 1000],
  );
  return rows[0];
}
