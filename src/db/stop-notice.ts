// Stop's word to the workers. A model step runs within its conversation's workflow task (a local activity), and
// the workflow hears of a Stop only once that task ends: so whoever takes a Stop from a user also says so
// here, and the worker running that conversation's step stops it at once (src/activities/stop-notices.ts).
import type pg from 'pg';

export const STOP_CHANNEL = 'brigade_stops';

export interface StopNotice {
  conversationId: string;
  /** when the Stop was asked for (ms since the epoch): it stops a step of a turn that began before */
  requestedAt: number;
}

export async function announceStop(pool: pg.Pool, notice: StopNotice): Promise<void> {
  await pool.query('SELECT pg_notify($1, $2)', [STOP_CHANNEL, `${notice.conversationId}:${notice.requestedAt}`]);
}

/** "<conversation id>:<ms>", or undefined for anything else (a channel anyone with a connection can notify). */
export function parseStopNotice(payload: string): StopNotice | undefined {
  const at = payload.lastIndexOf(':');
  if (at <= 0 || payload.length > 200) return undefined;
  const requestedAt = Number(payload.slice(at + 1));
  return Number.isSafeInteger(requestedAt) ? { conversationId: payload.slice(0, at), requestedAt } : undefined;
}
