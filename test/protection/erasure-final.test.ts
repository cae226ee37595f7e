// Erasure is final (issue 42): a model call still in flight when DELETE /v1/me answers writes nothing of the
// person afterwards (the fence, db/migrations/043_erasure_fence.sql), and an operator erasing `al"ice`
// erases al"ice's executions only, never alice's (src/protection/temporal-executions.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { userDigest } from '../../src/protection/user-digest.ts';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { OLGA_OPERATOR, type TestApp, startTestApp } from '../support/test-app.ts';

const suffix = randomBytes(4).toString('hex');
const PERSON = `fenced-${suffix}`;
const ALICE = `alice-${suffix}`;
const QUOTED = `al"ice-${suffix}`;
const token = (name: string) => `token-${name.replace(/\W/g, '')}-${suffix}-000000000000`;

let fake: FakeGemini;
let app: TestApp;
before(async () => {
  fake = await startFakeGemini();
  fake.scriptFn(() => reply.text('An answer.'));
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'fence-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '20s',
      // a budget, so that every call is reserved in the ledger before it is made, as in production
      TOKEN_BUDGET_PER_USER_PER_DAY: '1000000',
    },
    tokens: {
      [token(PERSON)]: { user: PERSON, roles: ['support'] },
      [token(ALICE)]: { user: ALICE, roles: ['support'] },
      [token('quoted')]: { user: QUOTED, roles: ['support'] },
    },
  });
});
after(async () => {
  await app?.stop();
  await fake?.close();
});

/** Every row of any table with a user_id column that is this user's, and the users record. */
async function rowsOf(user: string): Promise<Record<string, number>> {
  const tables = await app.adminQuery<{ table_schema: string; table_name: string }>(
    `SELECT c.table_schema, c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.column_name = 'user_id' AND t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const counts: Record<string, number> = {};
  for (const { table_schema, table_name } of tables) {
    const [row] = await app.adminQuery(`SELECT count(*)::int AS n FROM "${table_schema}"."${table_name}" WHERE user_id = $1`, [user]);
    if (row.n > 0) counts[`${table_schema}.${table_name}`] = row.n;
  }
  return counts;
}

test('model calls in flight during DELETE /v1/me write nothing of the person after the 204', async () => {
  const usage = { promptTokenCount: 50, candidatesTokenCount: 7, totalTokenCount: 57 };
  // a title's task-model call, settled on its own once the model answers (src/activities/usage-meter.ts)
  const titled = await app.call('POST', '/v1/conversations', { token: token(PERSON), body: { agent: 'support' } });
  assert.equal(titled.status, 201);
  const heldTitle = reply.hold(reply.text('A late title', { usage }));
  fake.titles.push(heldTitle);
  const first = await app.call('POST', `/v1/conversations/${titled.body.id}/messages`, { token: token(PERSON), body: { text: 'hello' } });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  await heldTitle.reached;
  // a chat step's model call, settled with the step's batch (src/db/batch.ts)
  const created = await app.call('POST', '/v1/conversations', { token: token(PERSON), body: { agent: 'support' } });
  assert.equal(created.status, 201);
  const held = reply.hold(reply.text('A late answer.', { usage }));
  fake.script(held);
  const turn = app.call('POST', `/v1/conversations/${created.body.id}/messages`, { token: token(PERSON), body: { text: 'a slow one' } });
  await held.reached;
  const keys = await app.adminQuery<{ key: string }>('SELECT key FROM usage_ledger WHERE user_id = $1 AND NOT settled', [PERSON]);
  assert.ok(
    keys.some((row) => row.key.startsWith('title:')) && keys.some((row) => row.key.startsWith('chat:')),
    'both calls in flight are reserved',
  );

  const erased = await app.call('DELETE', '/v1/me', { token: token(PERSON) });
  assert.equal(erased.status, 204, JSON.stringify(erased.body));
  assert.deepEqual(await rowsOf(PERSON), {}, 'nothing is left at the 204');

  heldTitle.release();
  held.release();
  await turn;
  // the attack saw the ledger row come back 3 s after the 204: give every retry and late write time
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  assert.deepEqual(await rowsOf(PERSON), {}, 'nothing of the person was written after the 204');
  const fences = await app.adminQuery(`SELECT erased_at IS NOT NULL AS done FROM erased_users WHERE encode(user_digest, 'hex') = $1`, [
    userDigest(PERSON),
  ]);
  assert.deepEqual(fences, [{ done: true }], 'the fence is recorded, by digest, and the erasure finished');

  // after the erasure the person may start afresh: a new conversation and its calls are theirs again
  const again = await app.call('POST', '/v1/conversations', { token: token(PERSON), body: { agent: 'support' } });
  assert.equal(again.status, 201, JSON.stringify(again.body));
  const said = await app.call('POST', `/v1/conversations/${again.body.id}/messages`, { token: token(PERSON), body: { text: 'hi' } });
  assert.equal(said.status, 200, JSON.stringify(said.body));
  assert.ok((await rowsOf(PERSON))['public.usage_ledger']! > 0, 'a new conversation is booked as before');
});

test('an operator erasing al"ice leaves alice\'s executions and rows', async () => {
  const start = async (user: string) => {
    const as = token(user === QUOTED ? 'quoted' : user);
    const created = await app.call('POST', '/v1/conversations', { token: as, body: { agent: 'support' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body as { id: string; workflowId: string };
  };
  const alices = [await start(ALICE), await start(ALICE)];
  const quoted = await start(QUOTED);
  // a run no row names (a start whose row is gone): found only through its search attributes
  await app.adminQuery('DELETE FROM conversations WHERE id = $1', [quoted.id]);

  const erased = await app.call('DELETE', `/v1/users/${encodeURIComponent(QUOTED)}`, { token: OLGA_OPERATOR });
  assert.equal(erased.status, 200, JSON.stringify(erased.body));
  assert.equal(erased.body.user, QUOTED);

  // the erasure has run its deletes by its answer: alice's runs would be terminated or gone by now
  for (const alice of alices) assert.equal((await app.client.workflow.getHandle(alice.workflowId).describe()).status.name, 'RUNNING');
  let gone = false;
  for (let i = 0; i < 150 && !gone; i++) {
    gone = await app.client.workflow
      .getHandle(quoted.workflowId)
      .describe()
      .then(
        () => false,
        (error) => error instanceof WorkflowNotFoundError,
      );
    if (!gone) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(gone, 'al"ice\'s stray execution is found by its digest and deleted');
  assert.equal((await rowsOf(ALICE))['public.conversations'], 2);
});
