// Turn control and a conversation's whole life (issue 22), over the Gemini wire format: Stop ends a
// streaming turn within a second, closes the model's stream and keeps what streamed; Stop withdraws the
// items a parked turn waits on; delete erases every row and the workflow; export returns the transcript.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { STOPPED_NOTE } from '../src/shared/turn-control.ts';
import { type FakeGemini, reply, startFakeGemini } from './support/fake-gemini.ts';
import { readSse } from './support/sse.ts';
import { ALICE, BOB, type TestApp, startTestApp } from './support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

before(async () => {
  fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  app = await startTestApp({
    env: { GEMINI_API_KEY: 'test-gemini-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_MAX_ATTEMPTS: '2', MODEL_TIMEOUT: '30s' },
  });
});
after(async () => {
  await app?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

async function conversation(): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'turn control' } });
  assert.equal(created.status, 201);
  return created.body.id;
}
const say = (id: string, text: string, headers: Record<string, string> = {}) =>
  app.call('POST', `/v1/conversations/${id}/messages`, { body: { text }, headers });
const stop = (id: string, token = ALICE) => app.call('POST', `/v1/conversations/${id}/stop`, { token });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A slow stream: `count` words, one every `intervalMs`. */
const slowWords = (count: number, intervalMs: number) =>
  reply.text(Array.from({ length: count }, (_, i) => `word${i + 1} `), { intervalMs });

describe('Stop', () => {
  test('ends a streaming turn within a second, closes the model stream and keeps what streamed', async () => {
    const id = await conversation();
    fake.script(slowWords(60, 100));
    const turn = say(id, 'Tell me a long story');
    const [request] = await fake.waitForRequests(1);
    await sleep(700); // a few words have streamed

    const started = performance.now();
    const stopped = await stop(id);
    const took = performance.now() - started;
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.deepEqual(stopped.body, { stopped: true });
    assert.ok(took < 1000, `Stop took ${Math.round(took)} ms`);

    const answered = await turn;
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.stopped, true);
    const cut = answered.body.messages.at(-1);
    assert.equal(cut.role, 'assistant');
    assert.equal(cut.stopped, true);
    assert.match(cut.text, /^word1 word2 /);
    assert.ok(!cut.text.includes('word60'), 'the reply was cut short');

    // the model's HTTP stream was closed by the caller, not finished
    const ended = await Promise.race([request!.ended, sleep(1000).then(() => 'still open')]);
    assert.equal(ended, 'closed');

    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.body.status, 'idle');
    const kept = view.body.messages.at(-1);
    assert.equal(kept.stopped, true);
    assert.equal(kept.text, cut.text);
    const events = await app.adminQuery(`SELECT type, data FROM events WHERE conversation_id = $1 AND type = 'turn.stopped'`, [id]);
    assert.equal(events.length, 1);
    assert.equal(events[0].data.messageId, cut.id);

    // idempotent: nothing runs now
    assert.deepEqual((await stop(id)).body, { stopped: false });
    assert.deepEqual((await stop(id)).body, { stopped: false });

    // the next message is a normal turn, and the model is told the last answer was cut short
    fake.script(reply.text('Sorry, here is the short version.'));
    const next = await say(id, 'Shorter please');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.stopped, undefined);
    assert.equal(next.body.messages.at(-1).text, 'Sorry, here is the short version.');
    const contents = fake.requests.at(-1)!.body.contents!;
    const modelPart = contents.find((content) => content.role === 'model')!.parts![0]!.text as string;
    assert.ok(modelPart.startsWith(cut.text.trim()));
    assert.ok(modelPart.endsWith(STOPPED_NOTE));
  });

  test('withdraws the approval a parked turn waits on and answers its call', async () => {
    const id = await conversation();
    fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }));
    const parked = await say(id, 'Cancel order 13579');
    assert.equal(parked.body.pending.length, 1);
    const item = parked.body.pending[0];

    const stopped = await stop(id);
    assert.deepEqual(stopped.body, { stopped: true });
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.body.status, 'idle');
    assert.deepEqual(view.body.pending, []);
    const tool = view.body.messages.find((message: any) => message.role === 'tool');
    assert.equal(tool.result.status, 'stopped');
    const closed = await app.adminQuery(`SELECT data FROM events WHERE conversation_id = $1 AND type = 'pending.closed'`, [id]);
    assert.equal(closed[0].data.closedAs, 'withdrawn');
    assert.equal(closed[0].data.id, item.id);
    const late = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'approve' } });
    assert.equal(late.status, 409);

    fake.script(reply.text('Fine, nothing was cancelled.'));
    const next = await say(id, 'Never mind');
    assert.equal(next.status, 200);
    assert.equal(next.body.messages.at(-1).text, 'Fine, nothing was cancelled.');
  });

  test('the stop signal stops a turn too; another user gets 404', async () => {
    const id = await conversation();
    assert.equal((await stop(id, BOB)).status, 404);
    fake.script(slowWords(60, 100));
    const turn = say(id, 'Another long story');
    await fake.waitForRequests(1);
    await sleep(300);
    await app.client.workflow.getHandle(`conversation-${id}`).signal('stop', { junk: true });
    const answered = await turn;
    assert.equal(answered.body.stopped, true);
  });
});

describe('delete and export', () => {
  test('export round-trips every message; delete leaves no row, no stream and no workflow', async () => {
    const id = await conversation();
    fake.script(reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }), reply.text('John Doe it is.'));
    assert.equal((await say(id, 'Who is john@gmail.com?', { 'Idempotency-Key': 'k-1' })).status, 200);
    fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), reply.text('Cancelled.'));
    const parked = await say(id, 'Cancel order 13579');
    const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: parked.body.pending[0].id, decision: 'approve' } });
    assert.equal(decided.status, 200);

    const view = await app.call('GET', `/v1/conversations/${id}`);
    const exported = await app.call('GET', `/v1/conversations/${id}/export?format=json`);
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-disposition')!, new RegExp(`attachment; filename="conversation-${id}.json"`));
    assert.deepEqual(exported.body.messages, view.body.messages);
    assert.ok(exported.body.toolCalls.some((call: any) => call.tool === 'get_user_info'));
    assert.ok(exported.body.decisions.some((event: any) => event.type === 'pending.closed' && event.data.decision === 'approve'));
    const markdown = await app.call('GET', `/v1/conversations/${id}/export?format=markdown`);
    assert.equal(markdown.status, 200);
    assert.match(markdown.headers.get('content-disposition')!, /\.md"$/);
    for (const message of view.body.messages.filter((m: any) => m.role !== 'tool')) assert.ok(markdown.body.includes(message.text));
    assert.match(markdown.body, /cancel_order.*approve/);
    assert.equal((await app.call('GET', `/v1/conversations/${id}/export?format=pdf`)).status, 400);
    assert.equal((await app.call('GET', `/v1/conversations/${id}/export`, { token: BOB })).status, 404);

    const stream = readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
      token: ALICE,
      live: true,
      until: (events) => events.some((event) => event.event === 'conversation.deleted'),
      timeoutMs: 10_000,
    });
    await sleep(300);
    assert.equal((await app.call('DELETE', `/v1/conversations/${id}`, { token: BOB })).status, 404);
    const deleted = await app.call('DELETE', `/v1/conversations/${id}`);
    assert.equal(deleted.status, 204);
    const seen = await stream;
    assert.ok(seen.some((event) => event.event === 'conversation.deleted'), 'the event stream was told and closed');

    assert.equal((await app.call('GET', `/v1/conversations/${id}`)).status, 404);
    assert.equal((await app.call('DELETE', `/v1/conversations/${id}`)).status, 404);
    assert.equal((await app.call('GET', `/v1/conversations/${id}/export`)).status, 404);
    assert.equal((await say(id, 'hello?')).status, 404);
    const list = await app.call('GET', '/v1/conversations');
    assert.ok(!list.body.conversations.some((row: any) => row.id === id));
    for (const table of ['conversations', 'messages', 'events', 'model_usage', 'tool_calls']) {
      const column = table === 'conversations' ? 'id' : 'conversation_id';
      const rows = await app.adminQuery(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [id]);
      assert.equal(rows[0].n, 0, `${table} keeps no row of the conversation`);
    }
    const keys = await app.adminQuery(`SELECT count(*)::int AS n FROM idempotency_keys WHERE scope = $1 OR response->>'id' = $2`, [`conversation:${id}`, id]);
    assert.equal(keys[0].n, 0);

    // DeleteWorkflowExecution is asynchronous on the server: the execution is gone shortly after.
    const deadline = Date.now() + 10_000;
    let gone = false;
    while (!gone && Date.now() < deadline) {
      try {
        await app.client.workflow.getHandle(`conversation-${id}`).describe();
        await sleep(200);
      } catch (error) {
        assert.ok(error instanceof WorkflowNotFoundError, String(error));
        gone = true;
      }
    }
    assert.ok(gone, 'the workflow execution is gone from Temporal');
  });
});
