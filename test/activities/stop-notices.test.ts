// How a Stop reaches a model step that runs within its workflow task (src/activities/stop-notices.ts): the
// API's notice over PostgreSQL stops the step of a turn that began before the Stop, whether the step was
// already watching or starts just after; it never stops a turn that began later, or another conversation's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { StopNotices } from '../../src/activities/stop-notices.ts';
import { createPool } from '../../src/db/pool.ts';
import { STOP_CHANNEL, announceStop, parseStopNotice } from '../../src/db/stop-notice.ts';
import { freshDatabase } from '../support/harness.ts';

let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let notices: StopNotices;

before(async () => {
  db = await freshDatabase();
  pool = createPool(db.url);
  notices = new StopNotices(pool);
});
after(async () => {
  await notices?.close();
  await pool?.end();
  await db?.drop();
});

const aborted = (signal: AbortSignal, ms = 2_000) =>
  new Promise<boolean>((resolve) => {
    if (signal.aborted) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

test("a watching step stops on its conversation's notice, and only on its own", async () => {
  const mine = await notices.watch('c-1', 1_000);
  const other = await notices.watch('c-2', 1_000);
  await announceStop(pool, { conversationId: 'c-1', requestedAt: 2_000 });
  assert.equal(await aborted(mine.signal), true);
  assert.equal(await aborted(other.signal, 300), false);
  mine.release();
  other.release();
});

test('a notice that came before the step watched stops it at once; a later turn is not stopped by it', async () => {
  // a step of a later turn watches meanwhile: the notice reaches the worker, and does not stop that one
  const later = await notices.watch('c-3', Number.MAX_SAFE_INTEGER);
  await announceStop(pool, { conversationId: 'c-3', requestedAt: 5_000 });
  assert.equal(await aborted(later.signal, 300), false);
  later.release();
  const late = await notices.watch('c-3', 4_000);
  assert.equal(late.signal.aborted, true, 'the turn began before the Stop');
  const next = await notices.watch('c-3', 6_000);
  assert.equal(next.signal.aborted, false, 'a turn that began after the Stop runs');
  late.release();
  next.release();
});

test('a listening connection the server drops is opened again, and closing after that is clean', async () => {
  const admin = createPool(db.adminUrl, { role: null, max: 1 });
  try {
    const first = await notices.watch('c-5', 0);
    first.release();
    // this database's listener only: the suite's other files share the server
    const dropped = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN brigade_stops' AND datname = current_database()",
    );
    assert.equal(dropped.rowCount, 1);
    // the worker listens again within its reconnect delay
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const watching = await notices.watch('c-5', 0);
    await announceStop(pool, { conversationId: 'c-5', requestedAt: 1 });
    assert.equal(await aborted(watching.signal), true);
    watching.release();
  } finally {
    await admin.end();
  }
});

test('a malformed notice on the channel is ignored', async () => {
  const watching = await notices.watch('c-4', 0);
  await pool.query('SELECT pg_notify($1, $2)', [STOP_CHANNEL, 'c-4']);
  await pool.query('SELECT pg_notify($1, $2)', [STOP_CHANNEL, 'c-4:soon']);
  assert.equal(await aborted(watching.signal, 300), false);
  watching.release();
  assert.deepEqual(parseStopNotice('c-4:12'), { conversationId: 'c-4', requestedAt: 12 });
  assert.equal(parseStopNotice(':12'), undefined);
});
