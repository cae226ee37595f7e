// The offline model's context summary, which a person opens too (GET .../context-summary; issue 46, item 5): a
// folded tool result reads as the offline model words it in a reply (its agent's reading, else its facts), never
// as the tool's name and JSON; the result's id stays, which the model needs to read it again with `recall`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { createOfflineTaskModel } from '../../src/model/offline-tasks.ts';
import { SUMMARY_TASK, parseClipped, summaryPrompt } from '../../src/model/summary-task.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';

const RESULT_ID = '7d1c8a52-0b6e-4c1f-9a3d-5e2f4b6c8d0e';
const orders = Array.from({ length: 12 }, (_, n) => ({
  id: String(13579 + n),
  customer_id: '1213210',
  product: `Smartphone Case model ${n}`,
  quantity: 1,
  price: 19.99,
  status: 'Shipped',
}));

const messages: ChatMessage[] = [
  { id: 'u1', role: 'user', text: 'Look up john@gmail.com. He called twice.' },
  {
    id: 'a1',
    role: 'assistant',
    text: '',
    toolCalls: [{ id: 'c1', name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }],
  },
  {
    id: RESULT_ID,
    role: 'tool',
    text: '',
    callId: 'c1',
    tool: 'get_user_info',
    args: { key: 'email', value: 'john@gmail.com' },
    // longer than the prompt's 600 characters a result: the line the summary reads is cut mid-JSON
    result: { user_info: { id: '1213210', name: 'John Doe', email: 'john@gmail.com', phone: '123-456-7890', username: 'johndoe' }, orders },
  },
  { id: 'a2', role: 'assistant', text: '', toolCalls: [{ id: 'c2', name: 'some_mcp_lookup', args: {} }] },
  {
    id: 'r2',
    role: 'tool',
    text: '',
    callId: 'c2',
    tool: 'some_mcp_lookup',
    args: {},
    result: { kitchen_name: 'North kitchen', open_orders: 3, record_id: 'k-77', items: [{ name: 'Oven' }, { name: 'Grill' }] },
  },
];

async function offlineSummary(): Promise<string> {
  const model = createOfflineTaskModel(builtInCatalog());
  const reply = await model.complete({
    charge: { userId: 'alice', key: 'summary:test' },
    task: SUMMARY_TASK,
    prompt: summaryPrompt(undefined, messages, 2_000, 100_000),
  });
  return reply.text;
}

test("the offline summary words each tool result as a person reads it: no tool name, no JSON, the result's id for recall", async () => {
  const text = await offlineSummary();
  const lines = text.split('\n');
  assert.equal(lines[0], '- The person said: Look up john@gmail.com.');
  // support's own reading of a customer with orders, from a result the prompt cut mid-JSON
  assert.match(
    lines[1]!,
    /^- Customer 1213210: John Doe, email john@gmail\.com, phone 123-456-7890.* \d+ orders: 13579 Smartphone Case model 0 \(Shipped\)/,
  );
  assert.match(lines[1]!, / \(read in part; the result has more\) \(result /, 'a clipped result says it was read in part');
  assert.match(lines[1]!, new RegExp(`\\(result ${RESULT_ID}\\)$`), 'the id the model recalls it by');
  // a tool no agent reads: its facts in words, ids left out
  assert.match(lines[2]!, /^- Kitchen name: North kitchen; Open orders: 3; 2 items: Oven, Grill\. \(result r2\)$/);
  assert.doesNotMatch(text, /get_user_info|some_mcp_lookup|returned|user_info|customer_id|record_id|[{}]|"/);
});

test('a clipped result is read up to its last whole value', () => {
  assert.deepEqual(parseClipped('{"a":1,"b":[1,2,3],"c":"x y'), { a: 1, b: [1, 2, 3] });
  assert.deepEqual(parseClipped('{"a":{"b":"q,\\"r"},"c":[{"d":1},{"e":'), { a: { b: 'q,"r' }, c: [{ d: 1 }] });
  // whole elements first: not half of the last order
  assert.deepEqual(parseClipped('{"orders":[{"id":1,"p":"x"},{"id":2,"p'), { orders: [{ id: 1, p: 'x' }] });
  assert.deepEqual(parseClipped('[1,2,3]'), [1, 2, 3]);
  assert.equal(parseClipped('{"only":"one long string that was cu…'), undefined);
});
