// A worker killed while an MCP call is at the server: the call's activity stops heartbeating, Temporal retries
// it on a new worker, and the turn finishes. The server sees the call again (at-least-once), with the same
// idempotency key in `_meta`, and the transcript gets its result once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type KitchenHttp, startKitchenHttp } from '../support/mcp-kitchen.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { killWorker, startWorkerProcess } from '../support/worker-process.ts';

let fake: FakeGemini;
let kitchen: KitchenHttp;
let app: TestApp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-crash-'));
const configPath = path.join(dir, 'mcp.json');
const env = () => ({
  GEMINI_API_KEY: 'crash-key',
  GEMINI_BASE_URL: fake.baseUrl,
  MODEL_TIMEOUT: '4s',
  BRIGADE_MCP_CONFIG: configPath,
  KITCHEN_TOKEN: 'crash-token',
});

before(async () => {
  fake = await startFakeGemini();
  kitchen = await startKitchenHttp();
  fs.writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: { kitchen: { url: kitchen.url, headers: { Authorization: 'Bearer ${KITCHEN_TOKEN}' }, agents: ['support'] } },
    }),
  );
  process.env.KITCHEN_TOKEN = 'crash-token';
  app = await startTestApp({ worker: false, env: env() });
});
after(async () => {
  await app?.stop();
  await kitchen?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const count = async (sql: string, params: unknown[]): Promise<number> => Number((await app.adminQuery(sql, params))[0].count);

test('a worker killed during an approved MCP call: the turn finishes on a new worker, its result recorded once', async () => {
  let worker = await startWorkerProcess(app, env());
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id;

  fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'flour', quantity: 3 } }));
  const parked = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Order 3 bags of flour' } });
  assert.equal(parked.status, 200, JSON.stringify(parked.body));
  const item = parked.body.pending[0];
  assert.equal(item.tool, 'kitchen__order_groceries');

  let reached!: () => void;
  const atServer = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holds = 1;
  kitchen.hooks.beforeOrder = async () => {
    if (holds-- <= 0) return;
    reached();
    await held;
  };
  fake.script(reply.text('Three bags of flour are on their way.'));
  const decided = app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'approve' } });
  await atServer;
  await killWorker(worker);
  release();
  worker = await startWorkerProcess(app, env());
  try {
    const deadline = Date.now() + 60_000;
    let view;
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      view = await app.call('GET', `/v1/conversations/${id}`);
    } while (view.body.status !== 'idle' && Date.now() < deadline);
    assert.equal(view.body.status, 'idle', 'the turn finished after the restart');
    await decided.catch(() => undefined);

    const orders = kitchen.calls.filter((call) => call.tool === 'order_groceries');
    assert.equal(orders.length, 2, 'the killed attempt was called again (at-least-once)');
    assert.equal(new Set(orders.map((call) => call.key)).size, 1, 'both attempts carried the same idempotency key');
    assert.equal(orders[0]!.key, `${id}:${item.callId}`);
    assert.equal(await count("SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'tool'", [id]), 1, 'one tool message');
    assert.equal(await count('SELECT count(*) FROM tool_calls WHERE conversation_id = $1', [id]), 1, 'one recorded call');
    assert.equal(view.body.messages.at(-1).text, 'Three bags of flour are on their way.');
  } finally {
    kitchen.hooks.beforeOrder = undefined;
    await killWorker(worker);
  }
});

test('a worker killed while a question waits for the user: the retried call asks again, and the new question is answered', async () => {
  let worker = await startWorkerProcess(app, env());
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id;
  try {
    fake.script(reply.calls({ name: 'kitchen__confirm_delivery', args: { order: 'B-2' } }));
    const parked = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Book the delivery' } });
    assert.equal(parked.status, 200, JSON.stringify(parked.body));
    const first = parked.body.pending[0];
    assert.equal(first.kind, 'question');
    await killWorker(worker);
    worker = await startWorkerProcess(app, env());

    const deadline = Date.now() + 60_000;
    let second;
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const view = await app.call('GET', `/v1/conversations/${id}`);
      second = view.body.pending?.find((item: { kind: string; id: string }) => item.kind === 'question' && item.id !== first.id);
    } while (!second && Date.now() < deadline);
    assert.ok(second, 'the retried call asked again');
    const stale = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      body: { pendingId: first.id, decision: 'accept', args: { day: 'monday' } },
    });
    assert.equal(stale.status, 409, "the dead attempt's question is closed");

    fake.script(reply.text('Booked for Monday.'));
    const answered = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      body: { pendingId: second.id, decision: 'accept', args: { day: 'monday' } },
    });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(
      answered.body.messages.find((message: { role: string }) => message.role === 'tool').result.text,
      'Delivery booked for monday.',
    );
    const asks = kitchen.calls.filter((call) => call.tool === 'confirm_delivery' && call.key === `${id}:${first.callId}`);
    assert.equal(asks.length, 2, 'the call ran again on the new worker, with the same idempotency key');
  } finally {
    await killWorker(worker);
  }
});
