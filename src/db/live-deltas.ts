// Live deltas: a model step's text handed to the API processes by NOTIFY, with the text as payload, so an SSE
// client sees it without a table write or a read. They are a courtesy to live viewers and are never stored:
// the same text reaches the events table in the delta writer's batches, and the final `message` is the record.
// A piece is identified by (messageId, attempt, offset in UTF-16 code units), as the persisted deltas are, so a
// client that gets the same text live and from the table keeps it once.
import type pg from 'pg';
import { z } from 'zod';

export const LIVE_DELTA_CHANNEL = 'brigade_deltas';

export const LiveDelta = z.object({
  conversationId: z.string(),
  /** whose conversation: the API hands the delta only to that user's streams */
  userId: z.string(),
  messageId: z.string(),
  attempt: z.number().int().positive(),
  offset: z.number().int().nonnegative(),
  text: z.string(),
});
export type LiveDelta = z.infer<typeof LiveDelta>;

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; this leaves room to spare. */
export const MAX_PAYLOAD_BYTES = 7_900;

/**
 * Sends the delta, split into payloads that fit, in one statement: one transaction, so the parts reach
 * listeners together and in order.
 */
export async function publishLiveDelta(db: pg.Pool | pg.ClientBase, delta: LiveDelta): Promise<void> {
  if (!delta.text) return;
  const payloads = livePayloads(delta);
  await db.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [LIVE_DELTA_CHANNEL, payloads]);
}

/** The delta as JSON payloads under the limit, split between code points, each part with its own offset. */
export function livePayloads(delta: LiveDelta, maxBytes = MAX_PAYLOAD_BYTES): string[] {
  const whole = JSON.stringify(delta);
  if (Buffer.byteLength(whole) <= maxBytes) return [whole];
  const room = maxBytes - Buffer.byteLength(JSON.stringify({ ...delta, text: '', offset: Number.MAX_SAFE_INTEGER }));
  if (room < 16) throw new Error('a live delta’s ids leave no room for its text');
  const payloads: string[] = [];
  let start = 0;
  let size = 0;
  let at = 0;
  for (const point of delta.text) {
    // what the code point costs inside a JSON string: escapes (\", \n, \u0001, a lone surrogate) and UTF-8
    const cost = Buffer.byteLength(JSON.stringify(point)) - 2;
    if (size + cost > room) {
      payloads.push(JSON.stringify({ ...delta, offset: delta.offset + start, text: delta.text.slice(start, at) }));
      start = at;
      size = 0;
    }
    size += cost;
    at += point.length;
  }
  payloads.push(JSON.stringify({ ...delta, offset: delta.offset + start, text: delta.text.slice(start) }));
  return payloads;
}

/** A payload from the channel, or undefined when it is not a live delta (a newer or older sender's shape). */
export function parseLiveDelta(payload: string): LiveDelta | undefined {
  try {
    const parsed = LiveDelta.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
