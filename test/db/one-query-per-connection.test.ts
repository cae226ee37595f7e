// Issue 28, item 4: one pg connection is never used by two things at once. pg queues a query sent while its
// connection is busy, warns ("client.query() was called while the client was already executing a query" is
// deprecated) and pg 9 will refuse it. The warning is fatal here: every test fails if this process saw it.
// Found under load in the turn bench's tool-result watcher (bench/tool-result-watch.ts), which queried on each
// notification of its LISTEN connection as it came; the guard below drives concurrent turns with open event
// streams, tools run inline and approvals through the real worker and API with the same tripwire.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import pg from 'pg';
import { ToolResultWatch } from '../../bench/tool-result-watch.ts';
import { freshDatabase } from '../support/harness.ts';
import { readSse } from '../support/sse.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';

const warnings: string[] = [];
process.on('warning', (warning) => {
  if (/already executing a query/.test(warning.message)) warnings.push(warning.stack ?? warning.message);
});
// pg warns once per process; its queue tells every time (pg 8's own test for the warning, read before it queues).
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client & { _queryQueue?: unknown[]; pipeline?: boolean }, ...args: unknown[]) {
  if (this._queryQueue?.length && !this.pipeline) warnings.push(new Error('a query while the connection was busy').stack!);
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;
afterEach(() => assert.deepEqual(warnings.splice(0), [], 'a pg connection was used by two things at once'));

describe("the bench's tool-result watcher", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: pg.Pool;
  before(async () => {
    database = await freshDatabase();
    admin = new pg.Pool({ connectionString: database.adminUrl, max: 8 });
  });
  after(async () => {
    await admin?.end();
    await database?.drop();
  });

  test('a burst of notifications: one query at a time, and every waiter learns its notification', async () => {
    const watch = await ToolResultWatch.start(database.adminUrl);
    try {
      const conversations = [randomUUID(), randomUUID(), randomUUID()];
      for (const [index, id] of conversations.entries()) {
        await admin.query(`INSERT INTO conversations (id, user_id, agent, title, workflow_id) VALUES ($1, 'alice', 'support', 't', $2)`, [
          id,
          `w-${index}-${id}`,
        ]);
      }
      const keys = conversations.flatMap((id) => Array.from({ length: 20 }, (_, i) => ({ id, key: `tool-result:${id}.${i}` })));
      const arrivals = keys.map(({ id, key }) => watch.next(id, key));
      const before = performance.now();
      // Each insert commits on its own and notifies: bursts of notifications arrive together.
      await Promise.all(
        keys.map(({ id, key }) =>
          admin.query(`INSERT INTO events (conversation_id, user_id, key, type, data) VALUES ($1, 'alice', $2, 'tool.result', '{}')`, [
            id,
            key,
          ]),
        ),
      );
      const times = await Promise.race([
        Promise.all(arrivals),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('a waiter never learned its event')), 15_000)),
      ]);
      assert.equal(times.length, keys.length);
      for (const at of times) assert.ok(at >= before);
    } finally {
      await watch.stop();
    }
  });
});

describe('concurrent turns through the worker and the API', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app?.stop();
  });

  test('six conversations with open event streams: lookups, chat and approvals at once, no connection shared', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: `load ${i}` } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      ids.push(created.body.id);
    }
    const streams = ids.map((id) =>
      readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
        token: ALICE,
        live: true,
        timeoutMs: 60_000,
        until: (events) => events.filter((event) => event.event === 'turn.ended').length >= 3,
      }),
    );
    const say = async (id: string, text: string) => {
      const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      return turn.body;
    };
    await Promise.all(
      ids.map(async (id, i) => {
        await say(id, 'look up john@gmail.com');
        const cancel = await say(id, `cancel order ${[28164, 61984, 58243, 13579, 24680, 11223][i]}`);
        if (cancel.pending?.length) {
          const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
            body: { pendingId: cancel.pending[0].id, decision: 'reject', reason: 'not now' },
          });
          assert.equal(decided.status, 200, JSON.stringify(decided.body));
        }
        await say(id, 'hello there');
        const got = await app.call('GET', `/v1/conversations/${id}`);
        assert.equal(got.status, 200);
      }),
    );
    const seen = await Promise.all(streams);
    for (const events of seen)
      assert.ok(
        events.some((event) => event.event === 'message'),
        'each stream carried the turns',
      );
  });
});
