// A worker killed during a regenerate (issue 45): the turn finishes on a new worker from the same point of the tree,
// with nothing lost or done twice: one new answer, a sibling of the one it replaces, and the leaf on it. The worker
// is the real `npm run worker` entry point in a child process; the model the real @google/genai client against a
// scripted server that holds the call while the worker is killed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { killWorker, startWorkerProcess } from '../support/worker-process.ts';

let fake: FakeGemini;
let app: TestApp;
const env = () => ({ GEMINI_API_KEY: 'crash-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '4s' });

before(async () => {
  fake = await startFakeGemini();
  app = await startTestApp({ worker: false, env: env() });
});
after(async () => {
  await app?.stop();
  await fake?.close();
});

test('a worker killed during a regenerate: one new answer, a sibling of the old one, nothing lost or doubled', async () => {
  let worker = await startWorkerProcess(app, env());
  try {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'crash' } });
    const id = created.body.id;
    fake.script(reply.text('First answer.'));
    const first = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'hello' } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const [asked, answer] = first.body.messages;

    const held = reply.hold(reply.text('Lost with the worker.'));
    fake.script(held, reply.text('Second answer.'));
    const regenerate = app.call('POST', `/v1/conversations/${id}/messages/${answer.id}/regenerate`);
    await held.reached;
    await killWorker(worker);
    held.release();
    worker = await startWorkerProcess(app, env());

    const again = await regenerate;
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(
      again.body.messages.map((m: { text: string }) => m.text),
      ['Second answer.'],
    );
    const contents = fake.requests.map((request) => (request.body.contents ?? []).map((c) => c.parts?.map((p) => p.text).join('')));
    assert.deepEqual(contents.slice(1), [['hello'], ['hello']], 'the retry read the same path as the killed attempt');

    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(
      view.body.messages.map((m: { text: string }) => m.text),
      ['hello', 'Second answer.'],
    );
    assert.deepEqual(view.body.messages[1].siblings, { index: 1, count: 2, ids: [answer.id, again.body.messages[0].id] });
    const rows = await app.adminQuery('SELECT role, parent_id FROM messages WHERE conversation_id = $1 ORDER BY seq', [id]);
    assert.deepEqual(
      rows.map((row) => [row.role, row.parent_id]),
      [
        ['user', null],
        ['assistant', asked.id],
        ['assistant', asked.id],
      ],
      'one user message, two answers to it: nothing written twice',
    );
    const usage = await app.adminQuery('SELECT count(*)::int AS count FROM model_usage WHERE conversation_id = $1', [id]);
    assert.equal(usage[0].count, 2, 'usage of the answered calls, once each');
  } finally {
    await killWorker(worker);
  }
});
