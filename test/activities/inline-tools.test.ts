// The model step runs the tools a reply calls when none needs the workflow, and asks the model again: a lookup
// turn is one local activity within one workflow task. Checked from the workflow's own history, against the old shape
// (INLINE_TOOLS=false), through a worker killed between the tool and the second answer, and with a reply that
// mixes a lookup with a call that needs approval.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import proto from '@temporalio/proto';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { killWorker, startWorkerProcess } from '../support/worker-process.ts';

const EventType = proto.temporal.api.enums.v1.EventType;
let fake: FakeGemini;
const env = (extra: Record<string, string> = {}) => ({
  GEMINI_API_KEY: 'inline-key',
  GEMINI_BASE_URL: fake.baseUrl,
  MODEL_TIMEOUT: '4s',
  ...extra,
});

before(async () => {
  fake = await startFakeGemini();
});
after(async () => {
  await fake?.close();
});

/**
 * What the workflow asked Temporal for, from its history: activities and local activities (their markers) by
 * type, and the workflow tasks of its turns (the run's first task, before any message, is not a turn's).
 */
async function shapeOf(app: TestApp, id: string) {
  const events = (await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory()).events ?? [];
  const activities = events
    .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name);
  // the worker's own record of a local activity: plain JSON, beside the (sealed) result
  const local = events
    .map((event) => event.markerRecordedEventAttributes)
    .filter((marker) => marker?.markerName === 'core_local_activity')
    .map((marker) => JSON.parse(Buffer.from(marker!.details!.data!.payloads![0]!.data!).toString()).activity_type as string);
  const workflowTasks = events.filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length - 1;
  return { activities, local, workflowTasks };
}

const count = async (app: TestApp, sql: string, params: unknown[]): Promise<number> => Number((await app.adminQuery(sql, params))[0].count);

async function lookupTurn(app: TestApp) {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Inline tools' } });
  fake.script(reply.calls({ name: 'get_order_by_id', args: { order_id: '24601' } }), reply.text('Order 24601 has shipped.'));
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Where is order 24601?' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return { id: created.body.id as string, turn: turn.body };
}

describe('inline tools (the default)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: env() });
  });
  after(async () => app?.stop());

  test('a lookup turn is one model step within one workflow task, with every message returned and written once', async () => {
    const { id, turn } = await lookupTurn(app);
    assert.deepEqual(
      turn.messages.map((message: { role: string }) => message.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(turn.messages[2].result.status, 'Shipped');
    assert.equal(turn.messages.at(-1).text, 'Order 24601 has shipped.');
    const shape = await shapeOf(app, id);
    assert.deepEqual({ activities: shape.activities, local: shape.local }, { activities: [], local: ['modelStep'] });
    // one task for the turn; none of its own when the message came before the start's task was taken (a loaded machine)
    assert.ok(shape.workflowTasks <= 1, `the turn took ${shape.workflowTasks} workflow tasks`);

    assert.equal(await count(app, 'SELECT count(*) FROM tool_calls WHERE conversation_id = $1', [id]), 1);
    assert.equal(await count(app, 'SELECT count(*) FROM messages WHERE conversation_id = $1', [id]), 4);
    assert.equal(await count(app, 'SELECT count(*) FROM model_usage WHERE conversation_id = $1', [id]), 2);
    const state = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(state.body.usage.calls, 2, 'both model calls are counted');
  });

  test('a reply that also calls a tool needing approval goes to the workflow whole: the lookup runs, the change waits', async () => {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Inline tools' } });
    const id = created.body.id;
    fake.script(
      reply.calls({ name: 'get_order_by_id', args: { order_id: '24601' } }, { name: 'cancel_order', args: { order_id: '24601' } }),
    );
    const parked = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Look up 24601 and cancel it' } });
    assert.equal(parked.status, 200, JSON.stringify(parked.body));
    assert.equal(parked.body.pending[0]?.tool, 'cancel_order');
    assert.equal(parked.body.messages.find((message: { role: string }) => message.role === 'tool')?.tool, 'get_order_by_id');
    const shape = await shapeOf(app, id);
    assert.deepEqual(shape.activities, []);
    // the lookup as the workflow's local activity, and the bookkeeping that writes the open item
    assert.deepEqual(shape.local, ['modelStep', 'runTool', 'record']);
  });
});

describe('a tool that fails inside the model step', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: env() });
  });
  after(async () => app?.stop());

  test('hands the reply back to the workflow, whose local activity retries the tool until it works', async () => {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Inline tools' } });
    const id = created.body.id;
    // The tool's query fails (infrastructure, not a result) while the table is away.
    await app.adminQuery('ALTER TABLE orders RENAME TO orders_away');
    const requestsBefore = fake.requests.length;
    fake.script(reply.calls({ name: 'get_order_by_id', args: { order_id: '24601' } }), reply.text('Order 24601 has shipped.'));
    const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Where is order 24601?' } });
    try {
      await fake.waitForRequests(requestsBefore + 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await app.adminQuery('ALTER TABLE orders_away RENAME TO orders');
    }
    const done = await turn;
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.messages.find((message: { role: string }) => message.role === 'tool')?.result.status, 'Shipped');
    assert.equal(done.body.messages.at(-1).text, 'Order 24601 has shipped.');
    const shape = await shapeOf(app, id);
    assert.deepEqual(
      shape.local,
      ['modelStep', 'runTool', 'modelStep'],
      "the tool ran as the workflow's local activity, and the second model call is a step of the workflow",
    );
    assert.equal(await count(app, 'SELECT count(*) FROM tool_calls WHERE conversation_id = $1', [id]), 1);
  });
});

describe('INLINE_TOOLS=false', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: env({ INLINE_TOOLS: 'false' }) });
  });
  after(async () => app?.stop());

  test('each tool is a local activity of its own between two model steps', async () => {
    const { id, turn } = await lookupTurn(app);
    assert.equal(turn.messages.length, 4);
    assert.deepEqual(await shapeOf(app, id), { activities: [], local: ['modelStep', 'runTool', 'modelStep'], workflowTasks: 1 });
  });
});

describe('a worker killed after the inline tool ran', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ worker: false, env: env() });
  });
  after(async () => app?.stop());

  test('the retried step finds the first answer and the tool result, and asks the model only for what is missing', async () => {
    let worker = await startWorkerProcess(app, env());
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Inline tools' } });
    const id = created.body.id;
    const held = reply.hold(reply.text('Order 24601 has shipped.'));
    fake.script(reply.calls({ name: 'get_order_by_id', args: { order_id: '24601' } }), held, reply.text('Order 24601 has shipped.'));
    const requestsBefore = fake.requests.length;
    const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Where is order 24601?' } });
    await held.reached;
    await killWorker(worker);
    held.release();
    worker = await startWorkerProcess(app, env());
    try {
      const done = await turn;
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.messages.at(-1).text, 'Order 24601 has shipped.');
      assert.equal(fake.requests.length - requestsBefore, 3, 'the first call once, the second twice (killed, then retried)');
      assert.equal(await count(app, 'SELECT count(*) FROM tool_calls WHERE conversation_id = $1', [id]), 1, 'the tool ran once');
      assert.equal(await count(app, "SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'assistant'", [id]), 2);
      assert.equal(await count(app, "SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'tool'", [id]), 1);
      assert.equal(await count(app, 'SELECT count(*) FROM model_usage WHERE conversation_id = $1', [id]), 2);
    } finally {
      await killWorker(worker);
    }
  });
});
