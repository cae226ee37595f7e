// Turn control and a conversation's whole life (issue 22), over the Gemini wire format: Stop ends a
// streaming turn within a second, closes the model's stream and keeps what streamed; Stop withdraws the
// items a parked turn waits on; delete erases every row and the workflow; export returns the transcript.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { STOPPED_NOTE } from '../../src/shared/turn-control.ts';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { readSse } from '../support/sse.ts';
import { ALICE, BOB, CAROL, type TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp(
  {
    checkKey: true,
    env: {
      MODEL_MAX_ATTEMPTS: '2',
      MODEL_TIMEOUT: '30s',
      // budgets the other tests stay far below (their calls cost a few hundred tokens)
      TOKEN_BUDGET_PER_CONVERSATION: '5000',
      TOKEN_BUDGET_PER_USER_PER_DAY: '100000',
      APPROVAL_TIMEOUT: '3s',
    },
  },
  (parts) => void ({ fake, app } = parts),
);
beforeEach(() => fake.reset());

async function conversation(token = ALICE): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'support', title: 'turn control' } });
  assert.equal(created.status, 201);
  return created.body.id;
}
const say = (id: string, text: string, headers: Record<string, string> = {}, token = ALICE) =>
  app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text }, headers });
const stop = (id: string, token = ALICE) => app.call('POST', `/v1/conversations/${id}/stop`, { token });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A slow stream: `count` words, one every `intervalMs`. */
const slowWords = (count: number, intervalMs: number) =>
  reply.text(
    Array.from({ length: count }, (_, i) => `word${i + 1} `),
    { intervalMs },
  );

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
    // what the stream reported before it was cut counts (budgets), once
    const used = await app.adminQuery('SELECT total_tokens FROM model_usage WHERE conversation_id = $1 AND step_id = $2', [id, cut.id]);
    assert.equal(used.length, 1);
    assert.ok(used[0].total_tokens > 0);

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
    const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      body: { pendingId: parked.body.pending[0].id, decision: 'approve' },
    });
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
    assert.ok(
      seen.some((event) => event.event === 'conversation.deleted'),
      'the event stream was told and closed',
    );

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
    const keys = await app.adminQuery(`SELECT count(*)::int AS n FROM idempotency_keys WHERE scope = $1 OR response->>'id' = $2`, [
      `conversation:${id}`,
      id,
    ]);
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

test('the OpenAPI document lists stop, delete and export', async () => {
  const doc = await app.call('GET', '/openapi.json', { token: '' });
  assert.ok(doc.body.paths['/v1/conversations/{id}/stop'].post);
  assert.ok(doc.body.paths['/v1/conversations/{id}'].delete);
  assert.ok(doc.body.paths['/v1/conversations/{id}/export'].get);
  assert.deepEqual(doc.body.paths['/v1/conversations/{id}/export'].get.parameters[1].schema.enum, ['json', 'markdown']);
  assert.ok(doc.body.components.schemas.Conversation.properties.budget);
});

describe('token budgets', () => {
  const costs = (totalTokenCount: number) => ({ promptTokenCount: totalTokenCount - 10, candidatesTokenCount: 10, totalTokenCount });
  const decide = (id: string, body: Record<string, unknown>, token = ALICE) =>
    app.call('POST', `/v1/conversations/${id}/decisions`, { token, body });

  test('a conversation over its budget parks; approve raises it, reject and the deadline end the turn', async () => {
    const id = await conversation();
    fake.script(reply.text('one', { usage: costs(3000) }), reply.text('two', { usage: costs(3000) }));
    assert.equal((await say(id, 'one')).body.messages.at(-1).text, 'one');
    assert.equal((await say(id, 'two')).body.messages.at(-1).text, 'two');

    // 6000 spent of 5000: the next step asks a person instead of the model
    const parked = await say(id, 'three');
    assert.equal(parked.status, 200);
    assert.equal(fake.requests.length, 2, 'no model call was made');
    const [item] = parked.body.pending;
    assert.equal(item.kind, 'budget');
    assert.deepEqual(item.args, { scope: 'conversation', spent: 6000, limit: 5000 });
    assert.deepEqual(item.decisions, ['approve', 'reject']);
    assert.match(item.prompt, /6,000 tokens of its 5,000-token budget/);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(view.body.budget.conversation, { spent: 6000, limit: 5000 });
    assert.equal(view.body.status, 'waiting');

    fake.script(reply.text('three', { usage: costs(100) }));
    const approved = await decide(id, { pendingId: item.id, decision: 'approve' });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.messages.at(-1).text, 'three');
    assert.deepEqual((await app.call('GET', `/v1/conversations/${id}`)).body.budget.conversation, { spent: 6100, limit: 10000 });

    fake.script(reply.text('four', { usage: costs(4000) }));
    assert.equal((await say(id, 'four')).body.messages.at(-1).text, 'four');

    // 10100 of 10000: reject ends the turn with a clear message
    const again = await say(id, 'five');
    assert.equal(again.body.pending[0].kind, 'budget');
    const rejected = await decide(id, { pendingId: again.body.pending[0].id, decision: 'reject', reason: 'too expensive' });
    assert.equal(rejected.status, 200);
    assert.match(
      rejected.body.messages.at(-1).text,
      /10,100 tokens of its 10,000-token budget, and the budget was not raised \(too expensive\)/,
    );
    assert.equal((await app.call('GET', `/v1/conversations/${id}`)).body.status, 'idle');

    // and nobody deciding before the deadline (3 s here) ends it too
    const late = await say(id, 'six');
    assert.equal(late.body.pending[0].kind, 'budget');
    const deadline = Date.now() + 10_000;
    let last: any;
    while (Date.now() < deadline) {
      const now = await app.call('GET', `/v1/conversations/${id}`);
      last = now.body.messages.at(-1);
      // the workflow may answer idle a moment before the closing message's row is read back
      if (now.body.status === 'idle' && last?.role === 'assistant') break;
      await sleep(200);
    }
    assert.match(last.text, /nobody raised it before the deadline/);
    assert.equal(fake.requests.length, 4, 'over budget, the model was never asked');
    const usage = await app.adminQuery(
      'SELECT count(*)::int AS n, sum(total_tokens)::int AS total FROM model_usage WHERE conversation_id = $1',
      [id],
    );
    assert.deepEqual(usage[0], { n: 4, total: 10100 });
  });

  test("a user over the day's budget parks in any conversation; approve lets the turn go on", async () => {
    const first = await conversation(CAROL);
    fake.script(reply.text('expensive', { usage: costs(100_000) }));
    assert.equal((await say(first, 'spend', {}, CAROL)).status, 200);
    const second = await conversation(CAROL);
    const parked = await sayAs(second, 'hello', CAROL);
    const [item] = parked.body.pending;
    assert.deepEqual(item.args, { scope: 'user-day', spent: 100_000, limit: 100_000 });
    assert.match(item.prompt, /You have used 100,000 tokens today, your daily budget is 100,000/);
    fake.script(
      reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }),
      reply.text('John it is.', { usage: costs(50) }),
    );
    const approved = await decide(second, { pendingId: item.id, decision: 'approve' }, CAROL);
    assert.equal(approved.body.messages.at(-1).text, 'John it is.', 'the whole turn went on, tool round included');
    const view = await app.call('GET', `/v1/conversations/${second}`, { token: CAROL });
    assert.ok(view.body.budget.userDay.spent > 100_000);
    assert.equal(view.body.budget.userDay.limit, 100_000);
  });
});

const sayAs = (id: string, text: string, token: string) => app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text } });
