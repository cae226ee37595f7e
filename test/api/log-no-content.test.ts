// Logs hold no content (issue 42): a provider's error that quotes a customer is told to the user and kept in the
// sealed history, but the worker's log says only what kind of failure it was. The worker is the real
// `npm run worker` process, so its log is exactly what an operator's log collector would receive.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { killWorker, startWorkerProcess } from '../support/worker-process.ts';
import { describeError, safeLogMeta } from '../../src/shared/log-safe.ts';

const EMAIL = 'priya.marker@candy.example';
const NAME = 'Priya Markerova';

let fake: FakeGemini;
let app: TestApp;
let worker: ChildProcess;
let log = '';

before(async () => {
  fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  const env = { GEMINI_API_KEY: 'test-gemini-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_MAX_ATTEMPTS: '2' };
  app = await startTestApp({ worker: false, env });
  worker = await startWorkerProcess(app, env);
  const keep = (chunk: Buffer) => (log += chunk.toString());
  worker.stdout!.on('data', keep);
  worker.stderr!.on('data', keep);
});
after(async () => {
  if (worker) await killWorker(worker);
  await app?.stop();
  await fake?.close();
});

async function waitForLine(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = log.split('\n').find((l) => pattern.test(l));
    if (line) return line;
    if (Date.now() > until) assert.fail(`no log line matched ${pattern}; the log:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("a provider's error quoting a customer reaches the user, and the log says only its kind and status", async () => {
  const said = `no customer record matches ${EMAIL} (${NAME})`;
  // a 400 is not retried; a 503 is, so both the retried attempt's log and the final failure's are seen
  fake.script(reply.error(503, `overloaded while reading ${EMAIL}`), reply.error(400, said));
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal(created.status, 201);
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Hello' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  // the user is still told why
  assert.match(turn.body.messages.at(-1).text, new RegExp(`The model could not answer \\(.*${EMAIL.replace(/\./g, '\\.')}`));

  const line = await waitForLine(/Model step failed/);
  assert.match(line, /ModelCallError/, 'the failure is named by its type');
  assert.match(line, /status=400/, 'and its HTTP status');
  assert.match(line, new RegExp(created.body.workflowId), "and the conversation's workflow id");
  await waitForLine(/Activity failed/);
  for (const marker of [EMAIL, NAME, 'Priya', 'candy']) assert.equal(log.includes(marker), false, `the log holds "${marker}":\n${log}`);
});

test('the summary walks causes and keeps tokens only', () => {
  const provider = Object.assign(new Error(`refused: ${EMAIL}`), { status: 403, code: 'PERMISSION_DENIED', body: { message: EMAIL } });
  const wrapped = new Error('activity failed', { cause: provider });
  assert.equal(describeError(wrapped), 'Error <- Error status=403 code=PERMISSION_DENIED');
  // a code that is free text is not a code
  assert.equal(describeError(Object.assign(new Error('x'), { code: `no ${EMAIL}` })), 'Error');
  assert.equal(describeError(`${NAME} said no`), 'thrown string');
  const meta = safeLogMeta({ workflowId: 'w-1', error: provider });
  assert.deepEqual(meta, { workflowId: 'w-1', error: 'Error status=403 code=PERMISSION_DENIED' });
  assert.equal(JSON.stringify(meta).includes(EMAIL), false);
});
