// The runtime with the real @google/genai client against a scripted Gemini-compatible server: the
// support flow, untrusted model output, bounded steps, retries and the one-turn-at-a-time rule.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { type TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp(
  {
    checkKey: true,
    env: {
      AGENT_MAX_STEPS: '4',
      AGENT_MAX_TOOL_ERRORS: '2',
      MODEL_MAX_ATTEMPTS: '3',
      MODEL_TIMEOUT: '10s',
    },
  },
  (parts) => void ({ fake, app } = parts),
);
beforeEach(() => fake.reset());

async function conversation(): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal(created.status, 201);
  return created.body.id;
}
const say = (id: string, text: string) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
const decide = (id: string, body: Record<string, unknown>) => app.call('POST', `/v1/conversations/${id}/decisions`, { body });
const toolMessages = (body: { messages: { role: string }[] }) => body.messages.filter((m) => m.role === 'tool') as any[];

describe('the support flow over the Gemini wire format', () => {
  test('looks up John Doe, is refused on a shipped order, cancels a processing one, refuses a bad phone edit', async () => {
    const id = await conversation();

    fake.script(
      reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }),
      reply.text('John Doe has three orders.', { usage: { promptTokenCount: 120, candidatesTokenCount: 8, totalTokenCount: 128 } }),
    );
    const lookup = await say(id, 'Who is john@gmail.com?');
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    assert.equal(toolMessages(lookup.body)[0].result.user_info.username, 'johndoe');
    assert.equal(lookup.body.messages.at(-1).text, 'John Doe has three orders.');
    const second = fake.requests[1]!.body;
    assert.equal(second.systemInstruction?.parts?.[0]?.text?.length ? true : false, true);
    const response = second.contents!.at(-1)!.parts!.find((p) => p.functionResponse)!.functionResponse;
    assert.equal(response.name, 'get_user_info');
    assert.equal(response.response.user_info.email, 'john@gmail.com');
    const declared = second.tools![0]!.functionDeclarations!.map((d) => d.name).sort();
    assert.deepEqual(declared, [
      'cancel_order',
      'get_customer_orders',
      'get_order_by_id',
      'get_user',
      'get_user_info',
      'update_user_contact',
    ]);

    fake.script(
      reply.calls({ name: 'cancel_order', args: { order_id: '24601' } }),
      reply.text('It has already shipped, so I could not cancel it.'),
    );
    const shipped = await say(id, 'Cancel order 24601');
    assert.equal(shipped.body.pending[0].tool, 'cancel_order');
    const refused = await decide(id, { pendingId: shipped.body.pending[0].id, decision: 'approve' });
    assert.deepEqual(toolMessages(refused.body)[0].result, { error: "Order has already shipped. Can't cancel it.", status: 'Shipped' });

    fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), reply.text('Order 13579 is cancelled.'));
    const processing = await say(id, 'Then cancel 13579');
    const cancelled = await decide(id, { pendingId: processing.body.pending[0].id, decision: 'approve' });
    assert.equal(toolMessages(cancelled.body)[0].result.status, 'Cancelled');
    assert.equal(cancelled.body.messages.at(-1).text, 'Order 13579 is cancelled.');

    fake.script(
      reply.calls({ name: 'update_user_contact', args: { user_id: '1213210', phone: '555-123-4567' } }),
      reply.text('Understood, I left the phone number alone.'),
    );
    const update = await say(id, 'Change his phone to 555-123-4567');
    const [item] = update.body.pending;
    const badEdit = await decide(id, { pendingId: item.id, decision: 'edit', args: { user_id: '1213210', phone: '555-12-34' } });
    assert.equal(badEdit.status, 422);
    assert.match(badEdit.body.error, /phone: must be a phone number in format XXX-XXX-XXXX/);
    const rejected = await decide(id, { pendingId: item.id, decision: 'reject', reason: 'number unverified' });
    const sentBack = fake.requests
      .at(-1)!
      .body.contents!.at(-1)!
      .parts!.find((p) => p.functionResponse)!.functionResponse;
    assert.match(JSON.stringify(sentBack.response), /number unverified/);
    assert.equal(rejected.body.messages.at(-1).text, 'Understood, I left the phone number alone.');

    const view = await app.call('GET', `/v1/conversations/${id}`);
    // eight chat calls and the title's: a conversation's usage holds every call made for it (the usage ledger)
    assert.equal(view.body.usage.calls, 9);
    assert.ok(view.body.usage.totalTokens >= 128);
  });
});

describe('model output is not trusted', () => {
  test('an unknown tool and bad arguments go back to the model, which can correct itself', async () => {
    const id = await conversation();
    fake.script(
      reply.calls({ name: 'delete_everything', args: {} }),
      reply.calls({ name: 'get_order_by_id', args: { order_id: '246' } }),
      reply.calls({ name: 'get_order_by_id', args: { order_id: '24601' } }),
      reply.text('Order 24601 has shipped.'),
    );
    const turn = await say(id, 'Where is order 24601?');
    const results = toolMessages(turn.body).map((m) => m.result);
    assert.match(results[0].error, /Unknown tool "delete_everything"/);
    assert.match(results[1].error, /Invalid arguments for get_order_by_id: order_id: must be a 5-digit order ID/);
    assert.equal(results[2].status, 'Shipped');
    assert.equal(turn.body.messages.at(-1).text, 'Order 24601 has shipped.');
  });

  test('too many invalid calls end the turn with a clear message', async () => {
    const id = await conversation();
    fake.script(reply.calls({ name: 'nope', args: {} }), reply.calls({ name: 'nope', args: {} }), reply.calls({ name: 'nope', args: {} }));
    const turn = await say(id, 'Do something odd');
    assert.match(turn.body.messages.at(-1).text, /the model made 3 invalid tool calls/);
    assert.equal(fake.requests.length, 3);
  });

  test('a turn that never reaches an answer stops at the step limit', async () => {
    const id = await conversation();
    fake.scriptFn(() => reply.calls({ name: 'get_order_by_id', args: { order_id: '24601' } }));
    const turn = await say(id, 'Loop forever');
    assert.match(turn.body.messages.at(-1).text, /I stopped after 4 steps/);
    assert.equal(fake.requests.length, 4);
  });
});

describe('model failures', () => {
  test('a 400 is not retried and ends the turn with a clear message', async () => {
    const id = await conversation();
    fake.script(reply.error(400, 'Invalid JSON payload'));
    const turn = await say(id, 'Hello');
    assert.equal(turn.status, 200);
    assert.match(turn.body.messages.at(-1).text, /The model could not answer/);
    assert.equal(fake.requests.length, 1);
    // the conversation stays usable
    fake.script(reply.text('Hello again.'));
    assert.equal((await say(id, 'Hello?')).body.messages.at(-1).text, 'Hello again.');
  });

  test('a 503 and a 429 are retried by Temporal, and the turn completes', async () => {
    const id = await conversation();
    fake.script(reply.error(503, 'overloaded'), reply.error(429, 'slow down'), reply.text('Back.'));
    const turn = await say(id, 'Hello');
    assert.equal(turn.body.messages.at(-1).text, 'Back.');
    assert.equal(fake.requests.length, 3);
    // the chat call that answered, once (the failed attempts settled at nothing); the title's is counted apart
    const chat = await app.adminQuery(
      "SELECT count(*)::int AS n FROM usage_ledger WHERE conversation_id = $1 AND kind = 'chat' AND tokens > 0",
      [id],
    );
    assert.equal(chat[0].n, 1, 'usage counts the call that answered, once');
  });
});

describe('one turn at a time', () => {
  test('a message while a turn runs is refused with 409', async () => {
    const id = await conversation();
    const held = reply.hold(reply.text('Finally.'));
    fake.script(held);
    const first = say(id, 'Take your time');
    await held.reached;
    const second = await say(id, 'Are you there?');
    assert.equal(second.status, 409);
    assert.match(second.body.error, /turn is already running/);
    held.release();
    assert.equal((await first).body.messages.at(-1).text, 'Finally.');
  });
});
