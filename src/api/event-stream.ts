import type { Request, Response } from 'express';
import type pg from 'pg';
import { asUser } from '../db/pool.ts';
import { eventPosition, readEventsAfter } from '../db/conversations.ts';
import type { LiveDelta } from '../db/live-deltas.ts';
import type { EventNotifier } from './event-notifier.ts';

const KEEPALIVE_MS = 15_000;
const PAGE = 500;

/**
 * Server-Sent Events from the append-only table: replay after Last-Event-ID, then wait for a
 * notification (or the keepalive tick, which also covers a lost notification) and read again.
 * Live deltas (src/db/live-deltas.ts) are written between them as they come (unless a read is owed: then
 * right after it), without an `id:` line: they are not in the table, so they leave the client's last event
 * id (what it resumes from) where the table's events put it, and the same text comes again from the
 * table's `message.delta` rows, with the same offsets.
 */
export async function streamEvents(
  req: Request,
  res: Response,
  deps: { pool: pg.Pool; notifier: EventNotifier; userId: string; conversationId: string },
): Promise<void> {
  const header = req.header('Last-Event-ID') ?? (typeof req.query.lastEventId === 'string' ? req.query.lastEventId : '0');
  // Clients see each event's place in its conversation (1, 2, 3, …), never the table's global id, which would
  // count every other user's events too; `last` keeps both.
  let last = await resumeAfter(header, deps);

  let wake: (() => void) | undefined;
  // Set by a notification that lands while we read, so it is not lost before we wait.
  let dirty = false;
  let closed = false;
  // Notifications arrive in commit order on the one listening connection. While a read that a notification
  // asked for (or the replay) is owed, live deltas wait for it: the client gets what was committed before a
  // delta (the user's message that started the step) before the delta, as it happened.
  let owed = true;
  // A held delta goes out among the read's events just before the first one committed after it: the newest
  // event id that wake-ups had named when it came. Before any wake-up that is unknown, so it waits for the
  // whole first read.
  let notifiedUpTo = Number.POSITIVE_INFINITY;
  let held: { frame: string; upTo: number }[] = [];
  /** the held deltas that came before event `before` (all of them: 'all') */
  const writeHeld = (before: number | 'all') => {
    const isDue = (entry: { upTo: number }) => before === 'all' || entry.upTo < before;
    const due = held.filter(isDue);
    if (!due.length) return;
    res.write(due.map((entry) => entry.frame).join(''));
    held = held.filter((entry) => !isDue(entry));
  };
  const unsubscribe = await deps.notifier.subscribe(deps.conversationId, {
    wake: (upTo) => {
      dirty = true;
      owed = true;
      if (upTo !== undefined) notifiedUpTo = notifiedUpTo === Number.POSITIVE_INFINITY ? upTo : Math.max(notifiedUpTo, upTo);
      wake?.();
    },
    // Written as it comes, with no table read. The stream checked ownership when it opened and listens to this
    // conversation alone; the delta names its user as well, and another user's is never written.
    delta: (delta) => {
      if (closed || delta.userId !== deps.userId) return;
      if (owed) held.push({ frame: liveFrame(delta), upTo: notifiedUpTo });
      else res.write(liveFrame(delta));
    },
  });
  // Headers only once subscribed: a client that has its 200 misses no live delta sent after it.
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  req.on('close', () => {
    closed = true;
    wake?.();
  });

  try {
    while (!closed) {
      dirty = false;
      const events = await asUser(deps.pool, deps.userId, (db) => readEventsAfter(db, deps.conversationId, last, PAGE));
      for (const { rowId, ...event } of events) {
        writeHeld(Number(rowId));
        res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        last = { rowId: Number(rowId), seq: event.id };
      }
      // A page that is not full is all there was; what commits later sends its own notification.
      if (events.length === PAGE || dirty) continue;
      // Nothing new after a wake or a keepalive: the conversation may have been deleted (its delete notifies).
      if (events.length === 0 && !(await stillThere(deps))) {
        res.write('event: conversation.deleted\ndata: {}\n\n');
        break;
      }
      // a notification that landed during that check must not wait for the next one
      if (dirty) continue;
      owed = false;
      writeHeld('all');
      const woken = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), KEEPALIVE_MS);
        wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      wake = undefined;
      if (!woken && !closed) res.write(': keepalive\n\n');
    }
  } finally {
    unsubscribe();
    res.end();
  }
}

/** Whether the conversation still exists (DELETE /v1/conversations/{id} ends its streams). */
async function stillThere(deps: { pool: pg.Pool; userId: string; conversationId: string }): Promise<boolean> {
  const { rows } = await asUser(deps.pool, deps.userId, (db) =>
    db.query('SELECT 1 FROM conversations WHERE id = $1', [deps.conversationId]),
  );
  return rows.length > 0;
}

/**
 * Where to resume: after the given event (its place in the conversation), except that an id beyond the
 * conversation's newest event (however large, even past what a bigint holds) means "nothing yet", so the
 * stream waits for the next event instead of failing or skipping it. Anything that is not a plain number
 * replays from the start.
 */
async function resumeAfter(
  header: string,
  deps: { pool: pg.Pool; userId: string; conversationId: string },
): Promise<{ rowId: number; seq: number }> {
  const digits = header.trim();
  if (!/^\d+$/.test(digits) || /^0+$/.test(digits)) return { rowId: 0, seq: 0 };
  const seq = BigInt(digits) > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(digits);
  return asUser(deps.pool, deps.userId, (db) => eventPosition(db, deps.conversationId, seq));
}

// A delta goes to every stream of its conversation: its frame is built once.
const frames = new WeakMap<LiveDelta, string>();

function liveFrame(delta: LiveDelta): string {
  let frame = frames.get(delta);
  if (!frame) {
    const { messageId, attempt, offset, text } = delta;
    frame = `event: message.delta\ndata: ${JSON.stringify({ type: 'message.delta', live: true, data: { messageId, attempt, offset, text } })}\n\n`;
    frames.set(delta, frame);
  }
  return frame;
}
