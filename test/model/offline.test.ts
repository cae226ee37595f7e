import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toolDeclarations } from '../../src/model/declarations.ts';
import { createOfflineModel, offlinePhrases } from '../../src/model/offline.ts';
import { selectModel } from '../../src/model/select.ts';
import type { ModelReply, ModelRequest } from '../../src/model/types.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { stoppedCallResult } from '../../src/workflows/stop.ts';

const model = createOfflineModel(builtInCatalog());
// every agent's tools: the phrasebook covers them all
const tools = toolDeclarations(builtInCatalog().specs.flatMap((agent) => agent.tools));
const OFFLINE_PHRASES = offlinePhrases(builtInCatalog());

const user = (text: string): ChatMessage => ({ id: 'u1', role: 'user', text });

function ask(messages: ChatMessage[], overrides: Partial<ModelRequest> = {}): Promise<ModelReply> {
  return model.generate({ system: 'support prompt', messages, tools, ...overrides });
}

/** A transcript that ends with the results of one step of calls. */
function afterCalls(...results: { tool: string; args?: Record<string, unknown>; result: unknown }[]): ChatMessage[] {
  return [
    user('do it'),
    {
      id: 'a1',
      role: 'assistant',
      text: '',
      toolCalls: results.map((entry, index) => ({ id: `c${index}`, name: entry.tool, args: entry.args ?? {} })),
    },
    ...results.map((entry, index): ChatMessage => ({
      id: `c${index}`,
      role: 'tool',
      text: `${entry.tool} done`,
      callId: `c${index}`,
      tool: entry.tool,
      args: entry.args ?? {},
      result: entry.result,
    })),
  ];
}

describe('offline model: phrasings become tool calls', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ['cancel order 13579', 'cancel_order', { order_id: '13579' }],
    ['Cancel 13579', 'cancel_order', { order_id: '13579' }],
    ['Please cancel order #47652.', 'cancel_order', { order_id: '47652' }],
    ["What's the status of order 24601?", 'get_order_by_id', { order_id: '24601' }],
    ['order 24601', 'get_order_by_id', { order_id: '24601' }],
    ['orders for 1213210', 'get_customer_orders', { customer_id: '1213210' }],
    ['Show me all orders of customer 1213210', 'get_customer_orders', { customer_id: '1213210' }],
    ['update 1213210 phone 555-123-4567', 'update_user_contact', { user_id: '1213210', phone: '555-123-4567' }],
    ['change email of 1213210 to a@b.com', 'update_user_contact', { user_id: '1213210', email: 'a@b.com' }],
    [
      'update 1213210 email new@example.com and phone 555-123-4567',
      'update_user_contact',
      { user_id: '1213210', email: 'new@example.com', phone: '555-123-4567' },
    ],
    // passed through as typed: the runtime's validation is what rejects it
    ['update 1213210 phone 5551234567', 'update_user_contact', { user_id: '1213210', phone: '5551234567' }],
    ['look up john@gmail.com', 'get_user_info', { key: 'email', value: 'john@gmail.com' }],
    ['find johndoe', 'get_user_info', { key: 'username', value: 'johndoe' }],
    ['who is 123-456-7890?', 'get_user_info', { key: 'phone', value: '123-456-7890' }],
    ['Show me everything about customer priya123', 'get_user_info', { key: 'username', value: 'priya123' }],
    ['Look up customer with email john@example.com', 'get_user_info', { key: 'email', value: 'john@example.com' }],
    ['get user johndoe', 'get_user', { key: 'username', value: 'johndoe' }],
    ['get user 987-654-3210', 'get_user', { key: 'phone', value: '987-654-3210' }],
  ];
  for (const [text, name, args] of cases) {
    test(`"${text}" → ${name}`, async () => {
      const reply = await ask([user(text)]);
      assert.deepEqual(reply.toolCalls, [{ name, args }]);
      // the call is shown in words by the client: the reply does not repeat it with the tool's name
      assert.equal(reply.text, '');
    });
  }

  test('every documented example yields a call of its tool', async () => {
    for (const phrase of OFFLINE_PHRASES) {
      for (const example of phrase.examples) {
        const reply = await ask([user(example)]);
        assert.equal(reply.toolCalls[0]?.name, phrase.tool, example);
      }
    }
  });

  test('a tool that is not offered is not called', async () => {
    const reply = await ask([user('cancel order 13579')], { tools: tools.filter((tool) => tool.name !== 'cancel_order') });
    assert.deepEqual(reply.toolCalls, []);
    assert.match(reply.text, /offline model/);
  });

  test('anything else gets the phrasings it understands', async () => {
    const reply = await ask([user('hello there')]);
    assert.deepEqual(reply.toolCalls, []);
    // a person reads this: the deployment's state in words, no setting's name
    assert.match(reply.text, /runs without a model key/);
    assert.doesNotMatch(reply.text, /\b[A-Z]+_[A-Z_]+\b/);
    for (const phrase of OFFLINE_PHRASES) assert.ok(reply.text.includes(phrase.examples[0]!), phrase.tool);
  });

  test('an agent without tools gets a short echo', async () => {
    const reply = await ask([user('What goes into a negroni?')], { tools: [] });
    assert.deepEqual(reply.toolCalls, []);
    assert.match(reply.text, /You said: "What goes into a negroni\?"/);
    assert.doesNotMatch(reply.text, /cancel order/);
  });
});

describe('offline model: summaries of results', () => {
  test('an error result is said plainly', async () => {
    const reply = await ask(
      afterCalls({
        tool: 'cancel_order',
        args: { order_id: '24601' },
        result: { error: "Order has already shipped. Can't cancel it.", status: 'Shipped' },
      }),
    );
    assert.equal(reply.text, "That did not work: Order has already shipped. Can't cancel it.");
    assert.deepEqual(reply.toolCalls, []);
  });

  test('a rejection says it was not done, with the reason', async () => {
    const reply = await ask(
      afterCalls({ tool: 'cancel_order', result: { status: 'rejected', error: 'The user rejected this call: wrong customer' } }),
    );
    assert.equal(reply.text, 'Not done: The user rejected this call: wrong customer');
  });

  test('a successful cancellation', async () => {
    const reply = await ask(
      afterCalls({ tool: 'cancel_order', result: { status: 'Cancelled', message: 'Order 13579 has been successfully cancelled' } }),
    );
    assert.equal(reply.text, 'Order 13579 has been successfully cancelled');
  });

  test('a customer, an order, a list and a profile with orders', async () => {
    const john = { id: '1213210', name: 'John Doe', email: 'john@gmail.com', phone: '123-456-7890', username: 'johndoe' };
    const shipped = { id: '24601', customer_id: '1213210', product: 'Wireless Headphones', quantity: 1, price: 79.99, status: 'Shipped' };
    const cancelled = { id: '13579', customer_id: '1213210', product: 'Smartphone Case', quantity: 2, price: 19.99, status: 'Cancelled' };

    assert.equal(
      (await ask(afterCalls({ tool: 'get_user', result: john }))).text,
      'Customer 1213210: John Doe, email john@gmail.com, phone 123-456-7890, username johndoe.',
    );
    assert.equal(
      (await ask(afterCalls({ tool: 'get_order_by_id', result: shipped }))).text,
      'Order 24601: Wireless Headphones x1 at $79.99, status Shipped.',
    );
    assert.equal(
      (await ask(afterCalls({ tool: 'get_customer_orders', result: [shipped, cancelled] }))).text,
      '2 orders: 24601 Wireless Headphones (Shipped); 13579 Smartphone Case (Cancelled).',
    );
    const info = (await ask(afterCalls({ tool: 'get_user_info', result: { user_info: john, orders: [cancelled] } }))).text;
    assert.match(info, /John Doe/);
    assert.match(info, /1 order: 13579 Smartphone Case \(Cancelled\)/);
    const updated = (
      await ask(
        afterCalls({
          tool: 'update_user_contact',
          result: { ...john, email: 'new@example.com', message: 'User information updated successfully' },
        }),
      )
    ).text;
    assert.match(updated, /^User information updated successfully\. Customer 1213210: John Doe, email new@example.com/);
  });

  test('a result no agent reads is said in words: no tool name, no JSON, no ids, lists counted in good English', async () => {
    const profile = {
      client: { client_id: 'c-42', name: 'Quilmes Bar', city: 'Buenos Aires', beers: ['Stout', 'IPA'] },
      searches: [{ query: 'stout' }],
      search_metadata: { method: 'client_id', sql: 'SELECT * FROM clients', execution_time_ms: 3 },
      recipe_id: '0b6a1d56-3f0e-4c1e-9d55-8f6f0f1f2a3b',
    };
    const said = (await ask(afterCalls({ tool: 'read_unknown_profile', result: profile }))).text;
    assert.equal(said, 'Name: Quilmes Bar; City: Buenos Aires; 2 beers: Stout, IPA; 1 search.');
    const list = (await ask(afterCalls({ tool: 'list_unknown_things', result: [{ id: 'x', name: 'Negroni' }, { name: 'Spritz' }] }))).text;
    assert.equal(list, '2 results: Negroni, Spritz.');
    for (const text of [said, list]) assert.doesNotMatch(text, /[{}"]|_unknown_|c-42|0b6a1d56|SELECT/);
  });

  test('several results in one step are each summarised', async () => {
    const reply = await ask(
      afterCalls(
        { tool: 'get_order_by_id', result: { error: 'Order not found' } },
        { tool: 'cancel_order', result: { status: 'Cancelled', message: 'Order 13579 has been successfully cancelled' } },
      ),
    );
    assert.equal(reply.text, 'That did not work: Order not found\nOrder 13579 has been successfully cancelled');
  });
});

describe('offline model: behaviour', () => {
  test('streams the reply in a few pieces that add up to the text', async () => {
    const deltas: string[] = [];
    const reply = await ask([user('hello there')], { onText: (delta) => deltas.push(delta) });
    assert.ok(deltas.length >= 2 && deltas.length <= 4, `${deltas.length} pieces`);
    assert.equal(deltas.join(''), reply.text);
  });

  test('is deterministic, with non-zero usage and the name "offline"', async () => {
    const messages = [user('cancel order 13579')];
    const first = await ask(messages);
    const second = await ask(messages);
    assert.deepEqual(first, second);
    assert.equal(first.model, 'offline');
    assert.equal(model.name, 'offline');
    assert.ok(first.usage.inputTokens > 0 && first.usage.outputTokens > 0);
    assert.equal(first.usage.totalTokens, first.usage.inputTokens + first.usage.outputTokens);
  });

  test('no reply carries an offline marker or a tool name: the client shows one offline badge per conversation', async () => {
    const transcripts: ChatMessage[][] = [
      [],
      [user('hi')],
      [user('cancel 13579')],
      afterCalls({ tool: 'get_user', result: { error: "Couldn't find a user with email of x@y.z" } }),
      afterCalls({ tool: 'mystery', result: [1, 2, 3] }),
      [user('x'), { id: 'a', role: 'assistant', text: 'previous answer' }],
    ];
    for (const messages of transcripts) {
      const reply = await ask(messages);
      assert.ok(reply.text.startsWith(''), reply.text);
    }
  });

  test('selectModel picks the offline model without a key', () => {
    assert.equal(selectModel({ GEMINI_MODEL: 'gemini-2.5-flash' }, builtInCatalog()).name, 'offline');
    assert.equal(selectModel({ GEMINI_API_KEY: '  ', GEMINI_MODEL: 'gemini-2.5-flash' }, builtInCatalog()).name, 'offline');
    assert.equal(
      selectModel({ GEMINI_API_KEY: 'a-real-looking-key', GEMINI_MODEL: 'gemini-2.5-flash' }, builtInCatalog()).name,
      'gemini-2.5-flash',
    );
  });
});

describe('the offline model answers a regenerate otherwise (issue 45)', () => {
  test('a seed words the answer another way, the same for the same seed; calls and JSON answers stay as they are', async () => {
    const plain = await ask([user('hello there')]);
    const seeded = await ask([user('hello there')], { seed: 'step-1' });
    const again = await ask([user('hello there')], { seed: 'step-1' });
    assert.notEqual(seeded.text, plain.text);
    assert.ok(seeded.text.endsWith(plain.text), seeded.text);
    assert.equal(again.text, seeded.text, 'a retry of the same step answers the same');
    const seeds = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((seed) => ask([user('hello there')], { seed }));
    assert.ok(new Set((await Promise.all(seeds)).map((reply) => reply.text)).size > 1, 'seeds give different answers');
    const call = await ask([user('look up john@gmail.com')], { seed: 'step-2' });
    assert.deepEqual(call.toolCalls, (await ask([user('look up john@gmail.com')])).toolCalls);
  });
});

describe('offline model: after Stop', () => {
  test("a message after a stopped brewery run is a new request: the stopped call's words are not read to the person", async () => {
    const stopped = afterCalls({ tool: 'recommend_breweries', result: stoppedCallResult(true) });
    const reply = await ask([...stopped, { id: 'u2', role: 'user', text: 'no' }]);
    assert.deepEqual(reply.toolCalls, []);
    assert.doesNotMatch(reply.text, /workflow|pressed Stop|That did not work/);
    assert.match(reply.text, /offline model/);
  });

  test('a message that answered an open item still reads the results it led to', async () => {
    const answered = afterCalls({ tool: 'get_order_by_id', result: { message: 'Order 24601 is shipped.' } });
    const reply = await ask([...answered, { id: 'u2', role: 'user', text: 'no' }]);
    assert.match(reply.text, /Order 24601 is shipped\./);
  });
});
