// The support agent end to end through the HTTP API, on the offline model, against real Temporal and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decisionSignal } from '../../../shared/definitions.ts';
import { AGENT_KEY, USER_KEY, WAITING_KEY } from '../../../shared/search-attributes.ts';
import { waitUntilIdle } from '../../../../test/support/scenarios.ts';
import { readSse } from '../../../../test/support/sse.ts';
import { ALICE, BOB, CAROL, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

async function newSupportConversation(token = ALICE): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'support', title: 'Help desk' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

const say = (id: string, text: string, token = ALICE) => app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text } });
const decide = (id: string, body: Record<string, unknown>, token = ALICE) =>
  app.call('POST', `/v1/conversations/${id}/decisions`, { token, body });

const orderStatus = async (orderId: string): Promise<string> =>
  (await app.adminQuery('SELECT status FROM orders WHERE id = $1', [orderId]))[0].status;

describe('conversations', () => {
  test('creating one returns its id, agent and workflow id', async () => {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.agent, 'support');
    assert.equal(created.body.workflowId, `conversation-${created.body.id}`);
    const described = await app.client.workflow.getHandle(created.body.workflowId).describe();
    assert.equal(described.status.name, 'RUNNING');
  });

  test('a bad body names the field and why', async () => {
    const bad = await app.call('POST', '/v1/conversations', { body: { agent: 'pirate' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.fields[0].field, 'agent');
    const notJson = await app.call('POST', '/v1/conversations', { body: '{"agent":', headers: { 'content-type': 'application/json' } });
    assert.equal(notJson.status, 400);
    const id = await newSupportConversation();
    const empty = await say(id, '   ');
    assert.equal(empty.status, 400);
    assert.match(empty.body.error, /text: must not be empty/);
  });

  test('no token or a bad token is 401', async () => {
    assert.equal((await app.call('GET', '/v1/conversations', { token: '' })).status, 401);
    assert.equal((await app.call('GET', '/v1/conversations', { token: 'not-a-real-token-at-all' })).status, 401);
  });

  test('only the support role may open a support conversation', async () => {
    const refused = await app.call('POST', '/v1/conversations', { token: BOB, body: { agent: 'support' } });
    assert.equal(refused.status, 403);
    const allowed = await app.call('POST', '/v1/conversations', { token: BOB, body: { agent: 'recipes' } });
    assert.equal(allowed.status, 201);
  });

  test("a user sees only their own conversations: another's is 404", async () => {
    const id = await newSupportConversation(ALICE);
    assert.equal((await app.call('GET', `/v1/conversations/${id}`, { token: CAROL })).status, 404);
    assert.equal((await say(id, 'look up johndoe', CAROL)).status, 404);
    const list = await app.call('GET', '/v1/conversations', { token: CAROL });
    assert.ok(!list.body.conversations.some((c: { id: string }) => c.id === id));
    assert.equal((await app.call('GET', '/v1/conversations/not-a-uuid')).status, 404);
  });
});

describe('the support agent', () => {
  test('looks up John Doe by email', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'Look up john@gmail.com');
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const tool = turn.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.equal(tool.tool, 'get_user_info');
    assert.deepEqual(tool.args, { key: 'email', value: 'john@gmail.com' });
    assert.equal(tool.result.user_info.name, 'John Doe');
    assert.deepEqual(tool.result.orders.map((o: { id: string }) => o.id).sort(), ['13579', '24601', '90357']);
    const last = turn.body.messages.at(-1);
    assert.equal(last.role, 'assistant');
    assert.notEqual(last.text, '', 'the offline model reads the result aloud');
    assert.deepEqual(turn.body.pending, []);
    assert.equal(turn.body.messages[0].role, 'user');
  });

  test('a shipped order is refused clearly, after approval', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'cancel order 24601');
    assert.equal(turn.body.pending.length, 1);
    const [item] = turn.body.pending;
    assert.equal(item.kind, 'approval');
    assert.equal(item.tool, 'cancel_order');
    assert.deepEqual(item.args, { order_id: '24601' });
    assert.ok(Date.parse(item.expiresAt) > Date.now());
    const decided = await decide(id, { pendingId: item.id, decision: 'approve' });
    assert.equal(decided.status, 200);
    const tool = decided.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.deepEqual(tool.result, { error: "Order has already shipped. Can't cancel it.", status: 'Shipped' });
    assert.match(decided.body.messages.at(-1).text, /already shipped/);
    assert.equal(await orderStatus('24601'), 'Shipped');
  });

  test('cancels a processing order after approval, once', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'please cancel order 13579');
    const [item] = turn.body.pending;
    assert.equal(await orderStatus('13579'), 'Processing', 'nothing happens before the decision');
    const state = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(state.body.status, 'waiting');
    assert.equal(state.body.pending[0].id, item.id);

    const decided = await decide(id, { pendingId: item.id, decision: 'approve' });
    const tool = decided.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.deepEqual(tool.result, { status: 'Cancelled', message: 'Order 13579 has been successfully cancelled' });
    assert.equal(await orderStatus('13579'), 'Cancelled');

    const again = await decide(id, { pendingId: item.id, decision: 'approve' });
    assert.equal(again.status, 409);
    assert.match(again.body.error, /not pending any more/);
  });

  test('an edit with a bad phone is refused (422) and a rejection reason reaches the model', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'update 1213210 phone 555-123-4567');
    const [item] = turn.body.pending;
    assert.equal(item.tool, 'update_user_contact');
    assert.deepEqual(item.args, { user_id: '1213210', phone: '555-123-4567' });

    const badEdit = await decide(id, { pendingId: item.id, decision: 'edit', args: { user_id: '1213210', phone: '555-12-34' } });
    assert.equal(badEdit.status, 422);
    assert.match(badEdit.body.error, /phone/);
    const wrongKind = await decide(id, { pendingId: item.id, decision: 'yes', choice: 'x' });
    assert.equal(wrongKind.status, 422);
    const unknown = await decide(id, { pendingId: '00000000-0000-4000-8000-000000000000', decision: 'approve' });
    assert.equal(unknown.status, 404);

    const rejected = await decide(id, { pendingId: item.id, decision: 'reject', reason: 'customer did not confirm' });
    assert.equal(rejected.status, 200);
    const tool = rejected.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.equal(tool.result.status, 'rejected');
    assert.match(tool.result.error, /customer did not confirm/);
    assert.match(rejected.body.messages.at(-1).text, /customer did not confirm/);
  });

  test('an edited call runs with the edited arguments', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'update 2837622 phone 555-000-1111');
    const [item] = turn.body.pending;
    const edited = await decide(id, { pendingId: item.id, decision: 'edit', args: { user_id: '2837622', phone: '555-999-8888' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const tool = edited.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.equal(tool.result.phone, '555-999-8888');
    assert.deepEqual(tool.args, { user_id: '2837622', phone: '555-999-8888' });
  });

  test('a message while an approval is pending rejects it with the message as reason, and the turn goes on', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'cancel order 47652');
    const [item] = turn.body.pending;
    // the message says it declines the waiting item (issue 46): without `pending` it would be a 409
    const next = await app.call('POST', `/v1/conversations/${id}/messages`, {
      body: { text: 'no wait, look up megana@gmail.com instead', pending: 'decline' },
    });
    assert.equal(next.status, 200);
    const rejected = next.body.messages.find((m: { tool?: string }) => m.tool === 'cancel_order');
    assert.equal(rejected.result.status, 'rejected');
    assert.match(rejected.result.error, /look up megana@gmail.com instead/);
    assert.equal(await orderStatus('47652'), 'Processing');
    const stale = await decide(id, { pendingId: item.id, decision: 'approve' });
    assert.equal(stale.status, 409);
    const state = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(state.body.status, 'idle');
    assert.deepEqual(state.body.pending, []);
  });

  test('a retried POST with the same Idempotency-Key returns the first outcome, not a second turn', async () => {
    const id = await newSupportConversation();
    const post = () =>
      app.call('POST', `/v1/conversations/${id}/messages`, {
        body: { text: 'status of order 24601' },
        headers: { 'Idempotency-Key': 'turn-1' },
      });
    const first = await post();
    const retried = await post();
    assert.equal(retried.status, 200);
    assert.deepEqual(retried.body, first.body);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.body.messages.filter((m: { role: string }) => m.role === 'user').length, 1);
    const bad = await app.call('POST', `/v1/conversations/${id}/messages`, {
      body: { text: 'x' },
      headers: { 'Idempotency-Key': 'no spaces allowed' },
    });
    assert.equal(bad.status, 400);
  });

  test('the conversation view has the transcript, status and usage', async () => {
    const id = await newSupportConversation();
    await say(id, 'orders for 1213210');
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.status, 200);
    assert.equal(view.body.status, 'idle');
    assert.deepEqual(
      view.body.messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(view.body.messages[1].toolCalls[0].name, 'get_customer_orders');
    assert.equal(view.body.usage.calls, 2);
    assert.ok(view.body.usage.totalTokens > 0);
  });
});

describe('operators', () => {
  test('see agent, user and waiting-for-human as typed search attributes, the title in the memo, and what it waits for', async () => {
    const id = await newSupportConversation();
    const handle = app.client.workflow.getHandle(`conversation-${id}`);
    const before = await handle.describe();
    assert.equal(before.typedSearchAttributes.get(AGENT_KEY), 'support');
    assert.equal(before.typedSearchAttributes.get(USER_KEY), 'alice');
    assert.equal(before.typedSearchAttributes.get(WAITING_KEY), false);
    assert.equal((await before.memo)?.title, 'Help desk');

    const turn = await say(id, 'cancel order 54321');
    const waiting = await handle.describe();
    assert.equal(waiting.typedSearchAttributes.get(WAITING_KEY), true);
    // The Web UI shows current details from this built-in query.
    const metadata = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    assert.match(metadata.currentDetails, /Waiting for a human: approve, reject or edit cancel_order \{"order_id":"54321"\}/);
    await decide(id, { pendingId: turn.body.pending[0].id, decision: 'reject', reason: 'no' });
    assert.equal((await handle.describe()).typedSearchAttributes.get(WAITING_KEY), false);
  });

  test('the OpenAPI document lists every route', async () => {
    const doc = await app.call('GET', '/openapi.json', { token: '' });
    assert.equal(doc.status, 200);
    for (const route of [
      '/v1/conversations',
      '/v1/conversations/{id}',
      '/v1/conversations/{id}/messages',
      '/v1/conversations/{id}/decisions',
      '/v1/conversations/{id}/events',
    ]) {
      assert.ok(doc.body.paths[route], route);
    }
    assert.deepEqual(doc.body.components.schemas.Decision.properties.decision.enum, [
      'approve',
      'reject',
      'edit',
      'yes',
      'no',
      'accept',
      'decline',
      'cancel',
    ]);
  });
});

describe('decisions by signal', () => {
  test('a bad signal is recorded and ignored; a good one decides', async () => {
    const id = await newSupportConversation();
    const turn = await say(id, 'cancel order 19283');
    const [item] = turn.body.pending;
    const handle = app.client.workflow.getHandle(`conversation-${id}`);
    await handle.signal(decisionSignal, { pendingId: item.id, decision: 'maybe' });
    await handle.signal(decisionSignal, 'not even an object');
    await handle.signal(decisionSignal, { pendingId: item.id, decision: 'approve' });
    await waitUntilIdle(app, id);
    assert.equal(await orderStatus('19283'), 'Cancelled');
    const described = await handle.describe();
    assert.equal(described.status.name, 'RUNNING');
    const rejected = await readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
      token: ALICE,
      until: (events) => events.filter((e) => e.event === 'signal.rejected').length >= 2,
    });
    const reasons = rejected.filter((e) => e.event === 'signal.rejected').map((e) => e.data.data.reason);
    assert.equal(reasons.length, 2);
    assert.match(reasons[0], /Invalid decision: decision/);
  });
});

describe('events', () => {
  test('stream as Server-Sent Events and resume after Last-Event-ID', async () => {
    const id = await newSupportConversation();
    const url = `${app.baseUrl}/v1/conversations/${id}/events`;
    const live = readSse(url, { token: ALICE, until: (events) => events.some((e) => e.event === 'turn.ended') });
    await say(id, 'status of order 24601');
    const events = await live;
    const types = events.map((e) => e.event);
    for (const type of ['message', 'tool.call', 'tool.result', 'message.delta', 'usage', 'turn.ended']) {
      assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    }
    const ids = events.map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );

    const middle = events[2]!.id!;
    const resumed = await readSse(url, { token: ALICE, lastEventId: middle, until: (e) => e.length >= events.length - 3 });
    assert.equal(resumed[0]!.id, events[3]!.id);
    assert.equal((await app.call('GET', `/v1/conversations/${id}/events`, { token: CAROL })).status, 404);
  });
});

describe('a conversation whose workflow is gone', () => {
  // It used to answer 404 for good while still listed; it is revived instead (test/workflows/revival.test.ts).
  test('is revived by its next message, not 404 or 500', async () => {
    const id = await newSupportConversation();
    await app.client.workflow.getHandle(`conversation-${id}`).terminate('test');
    const turn = await say(id, 'hello');
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
  });
});
