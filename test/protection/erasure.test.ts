// Erasure of a person (issue 35): GET /v1/me/export gives everything of theirs, DELETE /v1/me erases it from
// every table, the object store and Temporal (executions deleted, children with them), and leaves other
// people's data and anonymous usage totals alone. The operator's route does the same for a given user.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { conversationFilesPrefix } from '../../src/shared/conversation-files.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { localPath } from '../../src/storage/local-store.ts';
import { USER_KEY } from '../../src/shared/search-attributes.ts';
import { OLD_FASHIONED } from '../support/recipes.ts';
import { BOB, OLGA_OPERATOR, type TestApp, startTestApp } from '../support/test-app.ts';

// Users of this file only: the Temporal dev server is shared by every test file, and erasure searches it by user.
const suffix = randomBytes(4).toString('hex');
const PERSON = `person-${suffix}`;
const OTHER = `other-${suffix}`;
const PERSON_TOKEN = `token-person-${suffix}-0000000000`;
const OTHER_TOKEN = `token-other-${suffix}-00000000000`;

let app: TestApp;
let dataDir: string;
before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-erasure-'));
  app = await startTestApp({
    env: { DATA_DIR: dataDir, PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }) },
    tokens: { [PERSON_TOKEN]: { user: PERSON, roles: ['support'] }, [OTHER_TOKEN]: { user: OTHER, roles: ['support'] } },
  });
});
after(async () => {
  await app?.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** A user's conversations of both kinds: a support lookup, and a recipe saved through its child workflow; a file of the conversation. */
async function makeData(token: string) {
  const call = (method: string, pathname: string, body?: unknown) => app.call(method, pathname, { token, body });
  const support = await call('POST', '/v1/conversations', { agent: 'support' });
  assert.equal(support.status, 201, JSON.stringify(support.body));
  assert.equal((await call('POST', `/v1/conversations/${support.body.id}/messages`, { text: 'Look up john@gmail.com' })).status, 200);
  const recipes = await call('POST', '/v1/conversations', { agent: 'recipes' });
  const asked = await call('POST', `/v1/conversations/${recipes.body.id}/messages`, { text: `save this recipe: ${OLD_FASHIONED}` });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const approved = await call('POST', `/v1/conversations/${recipes.body.id}/decisions`, {
    pendingId: asked.body.pending[0].id,
    decision: 'approve',
  });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  const saved = approved.body.messages.find((message: { role: string }) => message.role === 'tool').result;
  assert.equal(saved.status, 'saved', JSON.stringify(saved));
  // what an MCP tool of the conversation returned, where the MCP activity keeps it
  const store = createObjectStore(app.config);
  const fileKey = `${conversationFilesPrefix(support.body.id)}report.txt`;
  await store.put(fileKey, Buffer.from('a file of the conversation'), 'text/plain');
  return {
    conversations: [support.body, recipes.body] as { id: string; workflowId: string }[],
    recipeId: saved.recipe_id as string,
    childWorkflowId: `save-recipe-${saved.recipe_id}`,
    files: [fileKey, `recipes/${saved.recipe_id}.png`],
  };
}

const exists = (key: string) =>
  fs.stat(localPath(path.join(dataDir, 'objects'), key)).then(
    () => true,
    () => false,
  );

/** Every row in any table of Brigade's database with a user_id column that is this user's. */
async function rowsOf(user: string): Promise<Record<string, number>> {
  const columns = await app.adminQuery<{ table_schema: string; table_name: string }>(
    `SELECT table_schema, table_name FROM information_schema.columns
      WHERE column_name = 'user_id' AND table_schema NOT IN ('pg_catalog', 'information_schema')
        AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')`,
  );
  const counts: Record<string, number> = {};
  for (const { table_schema, table_name } of columns) {
    const [row] = await app.adminQuery(`SELECT count(*)::int AS n FROM "${table_schema}"."${table_name}" WHERE user_id = $1`, [user]);
    if (row.n > 0) counts[`${table_schema}.${table_name}`] = row.n;
  }
  return counts;
}

/** Whether Temporal still has the execution (deletion is asynchronous on the server: a moment). */
// Temporal deletes asynchronously (a task of its own): give it up to a minute on a loaded machine.
async function goneFromTemporal(workflowId: string): Promise<boolean> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      await app.client.workflow.getHandle(workflowId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return true;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

test('GET /v1/me/export gives everything of theirs, then DELETE /v1/me erases it from every table, folder and Temporal', async () => {
  const mine = await makeData(PERSON_TOKEN);
  const theirs = await makeData(OTHER_TOKEN);
  const before = await rowsOf(PERSON);
  for (const table of [
    'public.conversations',
    'public.messages',
    'public.events',
    'public.model_usage',
    'public.tool_calls',
    'public.saved_recipes',
  ]) {
    assert.ok(before[table]! > 0, `the person has rows in ${table} to erase (${JSON.stringify(before)})`);
  }
  for (const key of mine.files) assert.ok(await exists(key), `${key} exists before`);

  const exported = await app.call('GET', '/v1/me/export', { token: PERSON_TOKEN });
  assert.equal(exported.status, 200);
  assert.equal(exported.body.user, PERSON);
  assert.deepEqual(exported.body.conversations.map((c: any) => c.conversation.id).sort(), mine.conversations.map((c) => c.id).sort());
  assert.ok(JSON.stringify(exported.body.conversations).includes('john@gmail.com'), 'the transcript is in the export');
  assert.deepEqual(
    exported.body.savedRecipes.map((r: any) => r.id),
    [mine.recipeId],
  );
  assert.ok(exported.body.usage.length > 0);
  assert.ok(!JSON.stringify(exported.body).includes(theirs.recipeId), 'nothing of anyone else');

  const totalsBefore = (await app.adminQuery('SELECT coalesce(sum(total_tokens), 0)::int AS t FROM usage_totals'))[0].t;
  const erased = await app.call('DELETE', '/v1/me', { token: PERSON_TOKEN });
  assert.equal(erased.status, 204, JSON.stringify(erased.body));

  assert.deepEqual(await rowsOf(PERSON), {}, 'no row of the person is left in any table');
  for (const key of mine.files) assert.equal(await exists(key), false, `${key} is erased`);
  assert.deepEqual(
    await fs
      .readdir(path.join(dataDir, 'objects', 'mcp'))
      .then((names) => names.filter((name) => mine.conversations.some((c) => c.id === name))),
    [],
  );
  for (const workflowId of [...mine.conversations.map((c) => c.workflowId), mine.childWorkflowId]) {
    assert.ok(await goneFromTemporal(workflowId), `${workflowId} is deleted from Temporal, not only terminated`);
  }
  const listed = [];
  for await (const run of app.client.workflow.list({ query: `${USER_KEY.name} = "${PERSON}"` })) listed.push(run.workflowId);
  assert.deepEqual(listed, [], 'no execution of theirs is listed');

  // budgets keep anonymous totals: the person's tokens are still counted, under no name
  const totalsAfter = (await app.adminQuery('SELECT coalesce(sum(total_tokens), 0)::int AS t FROM usage_totals'))[0].t;
  assert.ok(totalsAfter > totalsBefore, 'the usage went into anonymous totals');
  const columns = (await app.adminQuery(`SELECT column_name FROM information_schema.columns WHERE table_name = 'usage_totals'`)).map(
    (row) => row.column_name,
  );
  assert.ok(!columns.includes('user_id') && !columns.includes('conversation_id'));

  // the other person keeps everything
  const kept = await rowsOf(OTHER);
  assert.ok(kept['public.conversations'] === 2 && kept['public.saved_recipes'] === 1, JSON.stringify(kept));
  for (const key of theirs.files) assert.ok(await exists(key), `${key} of the other user stays`);
  assert.equal((await app.client.workflow.getHandle(theirs.conversations[0]!.workflowId).describe()).status.name, 'RUNNING');

  // erasing again is done at once, and the person can start afresh
  assert.equal((await app.call('DELETE', '/v1/me', { token: PERSON_TOKEN })).status, 204);
  assert.deepEqual((await app.call('GET', '/v1/conversations', { token: PERSON_TOKEN })).body.conversations, []);
});

test("an operator erases a given user's data; nobody else may", async () => {
  assert.equal((await app.call('DELETE', `/v1/users/${OTHER}`, { token: BOB })).status, 403);
  assert.equal((await app.call('GET', `/v1/users/${OTHER}/export`, { token: BOB })).status, 403);
  assert.equal((await app.call('DELETE', `/v1/users/${OTHER}`, { token: '' })).status, 401);
  assert.ok(Object.keys(await rowsOf(OTHER)).length > 0, 'a refused request erased nothing');

  const exported = await app.call('GET', `/v1/users/${OTHER}/export`, { token: OLGA_OPERATOR });
  assert.equal(exported.status, 200);
  assert.equal(exported.body.conversations.length, 2);
  const erased = await app.call('DELETE', `/v1/users/${OTHER}`, { token: OLGA_OPERATOR });
  assert.equal(erased.status, 200, JSON.stringify(erased.body));
  assert.equal(erased.body.erased.conversations, 2);
  assert.equal(erased.body.erased.savedRecipes, 1);
  assert.deepEqual(await rowsOf(OTHER), {});
});

test('the OpenAPI document lists the export, the erasures and the codec server', async () => {
  const { paths } = (await app.call('GET', '/openapi.json', { token: '' })).body;
  assert.ok(
    paths['/v1/me'].delete && paths['/v1/me/export'].get && paths['/v1/users/{user}'].delete && paths['/v1/users/{user}/export'].get,
  );
  assert.ok(paths['/codec/decode'].post && paths['/codec/encode'].post);
});
