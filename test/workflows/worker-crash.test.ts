// Killing the worker mid-turn and starting it again finishes the turn with nothing lost or done twice.
// The worker is the real `npm run worker` entry point in a child process; the model is the real
// @google/genai client against a scripted server that holds the call while the worker is killed.
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

const count = async (sql: string, params: unknown[]): Promise<number> => Number((await app.adminQuery(sql, params))[0].count);

test('a worker killed during the model call: the turn finishes on a new worker, nothing lost or done twice', async () => {
  let worker = await startWorkerProcess(app, env());
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id;

  const held = reply.hold(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }));
  fake.script(held, reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }));
  const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Cancel order 13579 please' } });
  await held.reached;
  await killWorker(worker);
  held.release();
  worker = await startWorkerProcess(app, env());

  const parked = await turn;
  assert.equal(parked.status, 200, JSON.stringify(parked.body));
  assert.equal(parked.body.pending[0].tool, 'cancel_order');
  assert.equal(fake.requests.length, 2, 'the killed attempt was retried once');

  fake.script(reply.text('Order 13579 is cancelled.'));
  const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: parked.body.pending[0].id, decision: 'approve' },
  });
  assert.equal(decided.body.messages.at(-1).text, 'Order 13579 is cancelled.');
  await killWorker(worker);

  assert.equal(await count("SELECT count(*) FROM orders WHERE id = '13579' AND status = 'Cancelled'", []), 1);
  assert.equal(await count('SELECT count(*) FROM tool_calls WHERE conversation_id = $1', [id]), 1, 'the tool ran once');
  assert.equal(await count("SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'user'", [id]), 1);
  assert.equal(await count("SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'assistant'", [id]), 2);
  assert.equal(await count("SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'tool'", [id]), 1);
  assert.equal(
    await count('SELECT count(*) FROM model_usage WHERE conversation_id = $1', [id]),
    2,
    'usage of the answered calls, once each',
  );
});
