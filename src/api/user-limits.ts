// Per-user limits (issue 29): new conversations and turns per minute, and event streams open at once. The
// counts are rows in PostgreSQL (030_user_limits.sql), so every API process of a deployment shares them;
// over a limit the answer is 429 with Retry-After. A limit of 0 is no limit.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { asUser } from '../db/pool.ts';
import { HttpError } from './http-error.ts';

export type UserLimits = Pick<Config, 'USER_EVENT_STREAMS' | 'USER_NEW_CONVERSATIONS_PER_MINUTE' | 'USER_TURNS_PER_MINUTE'>;

type RateKind = 'conversations' | 'turns';

const WORDS: Record<RateKind, string> = { conversations: 'new conversations', turns: 'turns' };

const PRUNE_EVERY_MS = 60_000;
let prunedAt = 0;

/** Counts one request of this kind in the current minute; 429 past the limit, until the minute ends. */
export async function countRequest(pool: pg.Pool, userId: string, kind: RateKind, limit: number): Promise<void> {
  if (limit <= 0) return;
  const { count, retryAfter } = await asUser(pool, userId, async (db) => {
    // finished minutes (everyone's) go now and then, so the table holds a minute or two of recent users
    if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = Date.now();
      await db.query('SELECT brigade_prune_user_limits()');
    }
    const { rows } = await db.query<{ count: number; retryAfter: number }>(
      `INSERT INTO user_rate_windows AS w (user_id, kind, window_start, count) VALUES ($1, $2, date_trunc('minute', now()), 1)
       ON CONFLICT (user_id, kind, window_start) DO UPDATE SET count = w.count + 1
       RETURNING w.count, ceil(extract(epoch FROM w.window_start + interval '1 minute' - now()))::int AS "retryAfter"`,
      [userId, kind],
    );
    return rows[0]!;
  });
  if (count > limit) {
    const seconds = Math.max(1, retryAfter);
    throw new HttpError(429, `Too many ${WORDS[kind]}: at most ${limit} a minute; try again in ${seconds} s`, { retryAfter: seconds });
  }
}

const LEASE_SECONDS = 60;
const RENEW_MS = 20_000;
const STREAM_RETRY_AFTER = 10;

/**
 * Takes one of the user's event-stream leases, or 429 when they hold `limit` already. The lease is renewed
 * while the stream is open; release() gives it back (a process that dies lets it expire in a minute).
 */
export async function openStreamLease(pool: pg.Pool, userId: string, limit: number): Promise<{ release(): Promise<void> }> {
  if (limit <= 0) return { release: async () => undefined };
  const id = randomUUID();
  const taken = await asUser(pool, userId, async (db) => {
    await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('brigade.user_event_streams:' || $1, 0))`, [userId]);
    await db.query('DELETE FROM user_event_streams WHERE user_id = $1 AND expires_at < now()', [userId]);
    const { rows } = await db.query<{ open: number }>('SELECT count(*)::int AS open FROM user_event_streams WHERE user_id = $1', [userId]);
    if (rows[0]!.open >= limit) return false;
    await db.query(`INSERT INTO user_event_streams (id, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`, [
      id,
      userId,
      LEASE_SECONDS,
    ]);
    return true;
  });
  if (!taken) {
    throw new HttpError(429, `Too many event streams open: at most ${limit} at once; close one or try again later`, {
      retryAfter: STREAM_RETRY_AFTER,
    });
  }
  const renew = setInterval(() => {
    asUser(pool, userId, (db) =>
      db.query(`UPDATE user_event_streams SET expires_at = now() + make_interval(secs => $2) WHERE id = $1`, [id, LEASE_SECONDS]),
    ).catch(
      () => undefined, // a missed renewal only lets the lease expire early: the stream itself goes on
    );
  }, RENEW_MS);
  renew.unref();
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      clearInterval(renew);
      await asUser(pool, userId, (db) => db.query('DELETE FROM user_event_streams WHERE id = $1', [id])).catch(() => undefined);
    },
  };
}
