// A worker killed while a recommendation waits for "would you like details?", started again: the
// conversation still times out (with no grounding call), or takes an answer that comes later.
// The worker is the real `npm run worker` in a child process. Two apps: a short deadline to time out, and
// a long one so that an answer after a cold restart (slow on a busy machine) still comes in time.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, afterEach, before, beforeEach, test } from 'node:test';
import { SAN_DIEGO_CLIENT, groundingCalls, scriptBeerGemini, untilIdle } from '../../../../test/support/beer.ts';
import { type FakeGemini, startFakeGemini } from '../../../../test/support/fake-gemini.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../../../../test/support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';
import { killWorker, startWorkerProcess } from '../../../../test/support/worker-process.ts';

const SHORT_MS = 8_000;
const LONG_MS = 180_000;
let fake: FakeGemini;
let api: FakeOpenBreweryDb;
let short: TestApp;
let long: TestApp;
let worker: ChildProcess | undefined;
/** Beer staff may open a conversation for a named client. */
const as =
  (app: TestApp): TestApp['call'] =>
  (method, path, options = {}) =>
    app.call(method, path, { token: ERIN_BEER_STAFF, ...options });
const env = () => ({ GEMINI_API_KEY: 'crash-key', GEMINI_BASE_URL: fake.baseUrl, OPENBREWERYDB_BASE_URL: api.baseUrl });

before(async () => {
  fake = await startFakeGemini();
  api = await startFakeOpenBreweryDb();
  [short, long] = await Promise.all([
    startTestApp({ worker: false, env: { ...env(), BEER_CONFIRMATION_TIMEOUT: `${SHORT_MS}ms` } }),
    startTestApp({ worker: false, env: { ...env(), BEER_CONFIRMATION_TIMEOUT: `${LONG_MS}ms` } }),
  ]);
});
// a test that fails midway leaves its worker running: the next test starts its own
afterEach(async () => {
  if (worker) await killWorker(worker);
  worker = undefined;
});
after(async () => {
  await short?.stop();
  await long?.stop();
  await api?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  scriptBeerGemini(fake);
});

async function parkedRecommendation(app: TestApp, timeoutMs: number): Promise<{ id: string; item: any; openedAt: number }> {
  const created = await as(app)('POST', '/v1/conversations', { body: { agent: 'beer', client: SAN_DIEGO_CLIENT } });
  const turn = await as(app)('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'recommend breweries' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  const item = turn.body.pending[0];
  assert.equal(item.kind, 'confirmation');
  return { id: created.body.id, item, openedAt: Date.parse(item.expiresAt) - timeoutMs };
}

test('killed during the wait and restarted: it still times out, with no grounding call', async () => {
  worker = await startWorkerProcess(short, env());
  const { id, item, openedAt } = await parkedRecommendation(short, SHORT_MS);
  await killWorker(worker);
  worker = await startWorkerProcess(short, env());
  const view = await untilIdle(as(short), id, SHORT_MS + 30_000);
  assert.ok(Date.now() - openedAt >= SHORT_MS, `ended ${Date.now() - openedAt} ms after opening`);
  const tool = view.messages.find((m: any) => m.tool === 'recommend_breweries');
  assert.equal(tool.result.answer, 'timeout');
  assert.equal(groundingCalls(fake), 0);
  const late = await as(short)('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'no' } });
  assert.equal(late.status, 409);
  await killWorker(worker);
  worker = undefined;
});

test('killed during the wait and restarted: an answer that comes later is taken', async () => {
  worker = await startWorkerProcess(long, env());
  const { id, item } = await parkedRecommendation(long, LONG_MS);
  await killWorker(worker);
  worker = await startWorkerProcess(long, env());
  const choice = item.options[0];
  const decided = await as(long)('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: item.id, decision: 'yes', choice: choice.name },
  });
  assert.equal(decided.status, 200, JSON.stringify(decided.body));
  const tool = decided.body.messages.find((m: any) => m.tool === 'recommend_breweries');
  assert.equal(tool.result.answer, 'yes');
  assert.equal(tool.result.chosen.brewery_id, choice.id);
  assert.equal(tool.result.summary.status, 'success');
  assert.equal(groundingCalls(fake), 1);
  await killWorker(worker);
  worker = undefined;
});
