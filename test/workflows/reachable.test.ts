// Every conversation reachable (issue 43, item 3): a conversation whose run is stuck or has ended still answers GET
// (200, from PostgreSQL, status "interrupted") and Stop, so a person can always read it and send the message that
// revives it; an operator's terminate in the middle of a turn tells the waiting client the turn was interrupted
// (its revived outcome), never that the conversation was deleted; a payload that claims to be sealed but is not is
// refused at the boundary, never a failed workflow task. Real parts: the Temporal dev server and its CLI, PostgreSQL
// with payloads sealed as in production, and the Gemini-wire test server behind the real @google/genai client.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, beforeEach, test } from 'node:test';
import { stateQuery } from '../../src/shared/definitions.ts';
import { temporalAddress, temporalCliPath } from '../support/harness.ts';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

before(async () => {
  fake = await startFakeGemini();
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'reachable-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '10s',
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
    },
  });
});
after(async () => {
  await app?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

async function conversationWithOneTurn(): Promise<{ id: string; workflowId: string }> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'reachable' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  fake.script(reply.text('First answer.'));
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'First question' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return { id: created.body.id, workflowId: created.body.workflowId };
}

const texts = (messages: { text?: string }[]) => messages.map((message) => message.text);

test('a stuck run: GET answers 200 from PostgreSQL as interrupted, Stop answers, and the next message revives it', async () => {
  const { id, workflowId } = await conversationWithOneTurn();
  // the same workflow id runs a type no worker has: every workflow task fails, as a poisoned payload's does
  await app.client.workflow.getHandle(workflowId).terminate('replaced by a stuck run');
  await app.client.workflow.start('noSuchWorkflowType', { workflowId, taskQueue: app.taskQueue, args: [] });
  // stuck once its workflow task has failed a few times (revival.ts WEDGED_ATTEMPTS)
  const deadline = Date.now() + 60_000;
  while ((await app.client.workflow.getHandle(workflowId).describe()).raw.pendingWorkflowTask?.attempt! < 3) {
    assert.ok(Date.now() < deadline, 'the run was not stuck within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const view = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(view.status, 200, JSON.stringify(view.body));
  assert.equal(view.body.status, 'interrupted');
  assert.deepEqual(texts(view.body.messages), ['First question', 'First answer.']);
  assert.deepEqual(view.body.pending, []);

  const stop = await app.call('POST', `/v1/conversations/${id}/stop`);
  assert.equal(stop.status, 200, JSON.stringify(stop.body));
  assert.deepEqual(stop.body, { stopped: false, status: 'interrupted' });

  fake.script(reply.text('Second answer.'));
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Second question' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.messages.at(-1).text, 'Second answer.');
  assert.equal((await app.call('GET', `/v1/conversations/${id}`)).body.status, 'idle');
});

test("an operator's terminate mid-turn: the waiting client is answered with the interrupted turn, never 'deleted', and GET never says running", async () => {
  const { id, workflowId } = await conversationWithOneTurn();
  const held = reply.hold(reply.text('An answer that never comes.'));
  fake.script(held);
  const waiting = app.call('POST', `/v1/conversations/${id}/messages`, {
    body: { text: 'A question cut short' },
    headers: { 'Idempotency-Key': `cut-${id}` },
  });
  await held.reached;
  // the model step leaves the workflow task after 2 s (MODEL_STEP_HANDOFF_AFTER), whose completion accepts the Update
  await new Promise((resolve) => setTimeout(resolve, 4_500));
  await app.client.workflow.getHandle(workflowId).terminate('an operator ended it');

  const answered = await waiting;
  assert.equal(answered.status, 200, JSON.stringify(answered.body));
  assert.doesNotMatch(JSON.stringify(answered.body), /deleted/);
  assert.equal(answered.body.messages[0].text, 'A question cut short');
  assert.match(answered.body.messages.at(-1).text, /interrupted: its workflow ended \(terminated\)/, 'the turn, closed in words');
  const replayed = await app.call('POST', `/v1/conversations/${id}/messages`, {
    body: { text: 'A question cut short' },
    headers: { 'Idempotency-Key': `cut-${id}` },
  });
  assert.equal(replayed.status, 200);
  assert.deepEqual(replayed.body, answered.body, 'the same key answers the same outcome');

  const view = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(view.status, 200);
  assert.equal(view.body.status, 'idle');
  held.release();
});

test('a signal whose payload claims to be sealed but is not (sent with the CLI) is recorded as rejected, and the conversation goes on', async () => {
  const { id, workflowId } = await conversationWithOneTurn();
  const handle = app.client.workflow.getHandle(workflowId);
  const before = (await handle.query(stateQuery)).rejectedSignals;
  await promisify(execFile)(temporalCliPath(), [
    'workflow',
    'signal',
    '--address',
    temporalAddress(),
    '--workflow-id',
    workflowId,
    '--name',
    'decision',
    '--input',
    '{"pendingId": "forged"}',
    '--input-meta',
    'encoding=binary/encrypted',
  ]);
  const deadline = Date.now() + 15_000;
  while ((await handle.query(stateQuery)).rejectedSignals === before) {
    assert.ok(Date.now() < deadline, 'the signal was not recorded as rejected within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(((await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0) <= 1, 'no workflow task failed on it');

  const view = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(view.status, 200);
  assert.equal(view.body.status, 'idle');
  fake.script(reply.text('Still here.'));
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Are you there?' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.messages.at(-1).text, 'Still here.');
});
