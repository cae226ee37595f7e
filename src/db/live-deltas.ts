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

const NOTIFY = 'SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload';

/**
 * Sends live deltas for every model step of a process: one statement at a time, and what comes while it runs
 * goes in the next one. A single step's delta goes at once; many streams at once share transactions (each
 * NOTIFY transaction takes a transaction id) and hold at most one pool connection, not one per stream.
 * Deltas reach listeners in the order they were published; a failed statement drops its deltas (the text
 * reaches the table in the steps' batches anyway).
 */
export class LivePublisher {
  private readonly db: pg.Pool;
  private queue: string[] = [];
  private waiting: (() => void)[] = [];
  private sending = false;

  constructor(db: pg.Pool) {
    this.db = db;
  }

  /** Resolves once the delta was sent (or dropped). */
  publish(delta: LiveDelta): Promise<void> {
    if (!delta.text) return Promise.resolve();
    this.queue.push(...livePayloads(delta));
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.send();
    });
  }

  private send(): void {
    if (this.sending || !this.queue.length) return;
    this.sending = true;
    const payloads = this.queue;
    const waiting = this.waiting;
    this.queue = [];
    this.waiting = [];
    void this.db
      .query(NOTIFY, [LIVE_DELTA_CHANNEL, payloads])
      .catch(() => undefined)
      .then(() => {
        this.sending = false;
        for (const resolve of waiting) resolve();
        this.send();
      });
  }
}

const publishers = new WeakMap<pg.Pool, LivePublisher>();

/** The process's publisher on this pool. */
export function livePublisher(pool: pg.Pool): LivePublisher {
  let publisher = publishers.get(pool);
  if (!publisher) publishers.set(pool, (publisher = new LivePublisher(pool)));
  return publisher;
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
