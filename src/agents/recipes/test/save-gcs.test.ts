// The upload through the real @google-cloud/storage client against fake-gcs-server, and exactly-once under
// a crash: a real `npm run worker` process killed after the image reached the bucket but before the insert
// leaves, once a new worker has finished, exactly one row and one object. The model is the offline one here
// (the Gemini path is in recipes-save.test.ts): the crash is about the pipeline's effects.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import proto from '@temporalio/proto';
import { createObjectStore } from '../../../storage/index.ts';
import { type FakeGcs, startFakeGcs } from '../../../../test/support/fake-gcs.ts';
import { type HoldingProxy, startHoldingProxy } from '../../../../test/support/holding-proxy.ts';
import { OLD_FASHIONED, adminQuery, fetchPng } from '../../../../test/support/recipes.ts';
import { type TestApp, startTestApp } from '../../../../test/support/test-app.ts';
import { killWorker, startWorkerProcess } from '../../../../test/support/worker-process.ts';

const BUCKET = 'brigade-recipes-test';
const EventType = proto.temporal.api.enums.v1.EventType;

let gcs: FakeGcs;
let proxy: HoldingProxy;
let app: TestApp;
const workers: ChildProcess[] = [];
const storageEnv = () => ({ GCS_BUCKET_NAME: BUCKET, STORAGE_EMULATOR_HOST: proxy.url });

before(async () => {
  gcs = await startFakeGcs();
  await gcs.createBucket(BUCKET);
  proxy = await startHoldingProxy(gcs.url);
  app = await startTestApp({ worker: false, env: storageEnv() });
});
after(async () => {
  for (const worker of workers) await killWorker(worker);
  await app?.stop();
  await proxy?.close();
  await gcs?.stop();
});

async function askToSave(): Promise<{ id: string; pendingId: string }> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'recipes' } });
  assert.equal(created.status, 201);
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, {
    body: { text: `save this recipe: ${OLD_FASHIONED}` },
  });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.pending[0].tool, 'save_recipe');
  return { id: created.body.id, pendingId: turn.body.pending[0].id };
}

const savedResult = (body: any) => body.messages.find((message: any) => message.role === 'tool').result;

test('GCS: the image is uploaded to recipes/<id>.png in the bucket and its URL serves the PNG', async () => {
  await app.startWorker();
  try {
    const { id, pendingId } = await askToSave();
    const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId, decision: 'approve' } });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    const result = savedResult(decided.body);
    assert.equal(result.status, 'saved', JSON.stringify(result));
    assert.equal(
      result.image_url,
      `${proxy.url}/download/storage/v1/b/${BUCKET}/o/${encodeURIComponent(`recipes/${result.recipe_id}.png`)}?alt=media`,
    );
    assert.deepEqual(await gcs.list(BUCKET), [`recipes/${result.recipe_id}.png`], 'the staged copy is gone');
    await fetchPng(result.image_url);
    const [row] = await adminQuery(app.adminUrl, 'SELECT image_url FROM saved_recipes WHERE id = $1', [result.recipe_id]);
    assert.equal(row.image_url, result.image_url);
  } finally {
    await app.stopWorker();
  }
});

test('a worker killed between the upload and the insert: a new worker finishes, one row and one object', async () => {
  const objectsBefore = await gcs.list(BUCKET);
  let worker = await startWorkerProcess(app, storageEnv());
  workers.push(worker);
  const { id, pendingId } = await askToSave();

  // The published object's upload reaches the bucket; its answer is held, and the worker dies meanwhile.
  const hold = proxy.holdNext(
    (request) => request.method === 'POST' && request.path.startsWith('/upload/') && /[?&]name=recipes%2F/.test(request.path),
  );
  const decided = app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId, decision: 'approve' } });
  const held = await Promise.race([
    hold.reached,
    decided.then((answer) => {
      throw new Error(`the save ended before its upload was held: ${JSON.stringify(answer.body)}`);
    }),
  ]);
  const recipeId = /[?&]name=recipes%2F([0-9a-f-]{36})\.png/.exec(held.path)![1]!;
  assert.ok((await gcs.list(BUCKET)).includes(`recipes/${recipeId}.png`), 'the object is in the bucket before the kill');
  assert.equal((await adminQuery(app.adminUrl, 'SELECT count(*)::int AS n FROM saved_recipes WHERE id = $1', [recipeId]))[0].n, 0);
  await killWorker(worker);
  hold.release();

  worker = await startWorkerProcess(app, storageEnv());
  workers.push(worker);
  const result = await decided;
  assert.equal(result.status, 200, JSON.stringify(result.body));
  assert.equal(savedResult(result.body).status, 'saved');
  assert.equal(savedResult(result.body).recipe_id, recipeId);

  const rows = await adminQuery(app.adminUrl, 'SELECT id, name, image_url FROM saved_recipes WHERE id = $1', [recipeId]);
  assert.equal(rows.length, 1, 'exactly one row');
  assert.equal(rows[0].name, 'Old Fashioned');
  const objects = (await gcs.list(BUCKET)).filter((name) => !objectsBefore.includes(name));
  assert.deepEqual(objects, [`recipes/${recipeId}.png`], 'exactly one object');
  await fetchPng(rows[0].image_url);

  // The history shows where the kill landed: the upload ran twice, the insert once, after it.
  const history = await app.client.workflow.getHandle(`save-recipe-${recipeId}`).fetchHistory();
  const scheduled = new Map<string, string>();
  const attempts: Record<string, number[]> = {};
  for (const event of history.events ?? []) {
    const scheduledAttributes = event.activityTaskScheduledEventAttributes;
    if (scheduledAttributes) scheduled.set(String(event.eventId), scheduledAttributes.activityType!.name!);
    const started = event.activityTaskStartedEventAttributes;
    if (started) (attempts[scheduled.get(String(started.scheduledEventId))!] ??= []).push(started.attempt!);
  }
  assert.deepEqual(attempts.uploadRecipeImage, [2], 'the upload was retried once (its first attempt died with the worker)');
  assert.deepEqual(attempts.insertRecipe, [1]);
  assert.ok(history.events!.some((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED));
  await killWorker(worker);
});

test("GCS: a conversation's folder of files is deleted whole, and only that folder", async () => {
  const store = createObjectStore(app.config);
  const png = new Uint8Array([137, 80, 78, 71]);
  await store.put('mcp/conversation-a/call-1-0.png', png, 'image/png');
  await store.put('mcp/conversation-a/call-2-0.png', png, 'image/png');
  await store.put('mcp/conversation-b/call-1-0.png', png, 'image/png');
  await store.deletePrefix('mcp/conversation-a/');
  assert.equal(await store.get('mcp/conversation-a/call-1-0.png'), undefined);
  assert.equal(await store.get('mcp/conversation-a/call-2-0.png'), undefined);
  assert.deepEqual(await store.get('mcp/conversation-b/call-1-0.png'), Buffer.from(png));
  await store.deletePrefix('mcp/conversation-a/'); // nothing left: fine
  await assert.rejects(store.deletePrefix('mcp/conversation-b'), /Invalid object prefix/);
});
