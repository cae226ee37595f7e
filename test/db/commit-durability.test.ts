// Deferred commits (src/db/commit-durability.ts): the writes a model step follows with a durable one commit
// without waiting for the log's flush, in their own transaction only; the transcript read keeps its order;
// and `settle` flushes the log past every deferred commit, so no activity completes on a write that a
// PostgreSQL crash could still lose. This database commits synchronously, as `npm start`'s does (the tests'
// server defers every commit).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { writeBatch, writeBatchReadTranscript } from '../../src/db/batch.ts';
import { StepCommits } from '../../src/db/commit-durability.ts';
import { insertConversation } from '../../src/db/conversations.ts';
import { asUser, createPool } from '../../src/db/pool.ts';
import { withToolCall } from '../../src/db/tool-calls.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';
import { freshDatabase } from '../support/harness.ts';

let db: Awaited<ReturnType<typeof freshDatabase>>;
let app: pg.Pool;
let admin: pg.Pool;

before(async () => {
  db = await freshDatabase();
  admin = createPool(db.adminUrl, { role: null });
  const { rows } = await admin.query<{ name: string }>('SELECT current_database() AS name');
  await admin.query(`ALTER DATABASE ${rows[0]!.name} SET synchronous_commit = on`);
  app = createPool(db.url);
});
after(async () => {
  await app?.end();
  await admin?.end();
  await db?.drop();
});

async function conversation(): Promise<{ conversationId: string; userId: string }> {
  const key = { conversationId: randomUUID(), userId: `u-${randomUUID()}` };
  await asUser(app, key.userId, (client) =>
    insertConversation(client, {
      id: key.conversationId,
      userId: key.userId,
      agent: 'support',
      client: null,
      title: 'durability',
      workflowId: `d-${key.conversationId}`,
    }),
  );
  return key;
}

const message = (text: string): ChatMessage => ({ id: randomUUID(), role: 'user', text });
const setting = async (client: pg.ClientBase) =>
  (await client.query<{ v: string }>("SELECT current_setting('synchronous_commit') AS v")).rows[0]!.v;
const lsn = async (sql: string) => (await admin.query<{ at: string }>(`SELECT (${sql})::text AS at`)).rows[0]!.at;
const atOrPast = async (a: string, b: string) =>
  (await admin.query<{ ok: boolean }>('SELECT $1::pg_lsn >= $2::pg_lsn AS ok', [a, b])).rows[0]!.ok;

test('a deferred batch commits with synchronous_commit off, and only its own transaction does', async () => {
  const key = await conversation();
  const client = await app.connect();
  try {
    assert.equal(await setting(client), 'on');
    await client.query('BEGIN');
    await asUserIn(client, key.userId);
    await writeBatch(client, key, { messages: [message('deferred')] }, { deferCommit: true });
    assert.equal(await setting(client), 'off', 'the batch deferred its transaction');
    await client.query('COMMIT');
    assert.equal(await setting(client), 'on', 'the next transaction on the connection commits durably again');

    await client.query('BEGIN');
    await asUserIn(client, key.userId);
    await writeBatch(client, key, { messages: [message('durable')] });
    assert.equal(await setting(client), 'on', 'a batch not deferred leaves the setting alone');
    await client.query('COMMIT');
  } finally {
    client.release();
  }
});

test('the deferred transcript read writes the batch and returns the whole transcript in order', async () => {
  const key = await conversation();
  const written = Array.from({ length: 40 }, (_, i) => message(`m${i}`));
  await writeBatch(app, key, { messages: written.slice(0, 39) });
  const plain = await writeBatchReadTranscript(app, key, { messages: [] });
  const deferred = await writeBatchReadTranscript(app, key, { messages: [written[39]!] }, { deferCommit: true });
  assert.deepEqual(
    deferred.map((m) => m.text),
    written.map((m) => m.text),
  );
  assert.deepEqual(deferred.slice(0, 39), plain);
});

test('a deferred tool call defers its whole transaction, effect and record together', async () => {
  const key = await conversation();
  const seen = await withToolCall(app, { ...key, callId: 'c1' }, (client) => setting(client), { deferCommit: true });
  assert.equal(seen, 'off');
  assert.equal(await withToolCall(app, { ...key, callId: 'c2' }, (client) => setting(client)), 'on');
});

test('settle flushes the log past every deferred commit of the step; a durable write flushes it itself', async () => {
  const key = await conversation();
  const commits = new StepCommits(app);
  assert.equal(await commits.defer(), true, 'PostgreSQL 17 or later lets brigade_app flush the log');
  await writeBatch(app, key, { messages: [message('one')] }, { deferCommit: true });
  await writeBatch(app, key, { messages: [message('two')] }, { deferCommit: true });
  const written = await lsn('pg_current_wal_insert_lsn()');
  await commits.settle();
  assert.ok(await atOrPast(await lsn('pg_current_wal_flush_lsn()'), written), 'settled: flushed past the deferred commits');

  await writeBatch(app, key, { messages: [message('three')] }, { deferCommit: true });
  const deferred = await lsn('pg_current_wal_insert_lsn()');
  await writeBatch(app, key, { messages: [message('four')] });
  // Its commit record lies past what was inserted before it: waiting for it flushed the deferred commit too.
  // (The insert position read after it may already hold other sessions' unflushed commits: the suite shares
  // the server.)
  const flushed = await lsn('pg_current_wal_flush_lsn()');
  assert.ok(await atOrPast(flushed, deferred), `a durable commit flushed the log past the deferred one (${flushed} vs ${deferred})`);
});

async function asUserIn(client: pg.ClientBase, userId: string) {
  await client.query("SELECT set_config('brigade.user_id', $1, true)", [userId]);
}
