// An approval is bound to the call it was asked about (issue 45, item 0): a decision that names other arguments
// than the item's is refused with a 409 that says so, nothing runs and the item still waits; the same
// arguments (in any key order) decide it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { type TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp({ checkKey: true, env: { MODEL_TIMEOUT: '20s' } }, (parts) => void ({ fake, app } = parts));

test('a decision naming other arguments than the approval was asked for is refused (409); the asked ones decide it', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'binding' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }));
  const parked = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'cancel order 13579' } });
  assert.equal(parked.status, 200, JSON.stringify(parked.body));
  const [item] = parked.body.pending;
  assert.equal(item?.tool, 'cancel_order', JSON.stringify(parked.body));
  const calls = () => app.adminQuery('SELECT call_id FROM tool_calls WHERE conversation_id = $1', [id]);

  const other = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: item.id, decision: 'approve', args: { ...item.args, order_id: '24680' } },
  });
  assert.equal(other.status, 409, JSON.stringify(other.body));
  assert.equal(
    other.body.error,
    `Pending item ${item.id} asks about cancel_order with other arguments than this decision names; nothing was decided. Read the item again, or edit the arguments.`,
  );
  const view = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(view.body.status, 'waiting');
  assert.deepEqual(
    view.body.pending.map((pending: { id: string }) => pending.id),
    [item.id],
  );
  assert.equal((await calls()).length, 0, 'nothing ran');

  fake.script(reply.text('Cancelled.'));
  const reordered = Object.fromEntries(Object.entries(item.args as Record<string, unknown>).reverse());
  const same = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: item.id, decision: 'approve', args: reordered },
  });
  assert.equal(same.status, 200, JSON.stringify(same.body));
  assert.equal(same.body.messages.at(-1).text, 'Cancelled.');
  assert.equal((await calls()).length, 1);
});
