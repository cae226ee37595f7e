// Support's approvals carry what they touch (PendingItem.preview, issue 46 item 3), through the HTTP API on the
// offline model against real Temporal and PostgreSQL: a cancel names the order's product, price and status and
// its customer, a contact change the current details; an order that does not exist opens without a preview.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ALICE, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

async function approvalFor(text: string) {
  const created = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'support' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { token: ALICE, body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.pending.length, 1, JSON.stringify(turn.body));
  return { id: created.body.id as string, item: turn.body.pending[0] };
}

test('a cancel approval carries the order it touches, in the answer, the view and the pending.opened event', async () => {
  const { id, item } = await approvalFor('cancel order 13579');
  assert.equal(item.tool, 'cancel_order');
  const order = {
    id: '13579',
    product: 'Smartphone Case',
    quantity: 2,
    price: 19.99,
    status: 'Processing',
    customer: { id: '1213210', name: 'John Doe' },
  };
  assert.deepEqual(item.preview, { order });
  const view = await app.call('GET', `/v1/conversations/${id}`, { token: ALICE });
  assert.deepEqual(view.body.pending[0].preview, { order });
  const [opened] = await app.adminQuery("SELECT data FROM events WHERE conversation_id = $1 AND type = 'pending.opened'", [id]);
  assert.deepEqual(opened.data.preview, { order });
  // a preview only shows: nothing changed before the decision
  assert.equal((await app.adminQuery('SELECT status FROM orders WHERE id = $1', ['13579']))[0].status, 'Processing');
});

test("a contact change's approval carries the customer's current details beside the new ones", async () => {
  const { item } = await approvalFor('update 2837622 phone 555-000-1111');
  assert.equal(item.tool, 'update_user_contact');
  assert.deepEqual(item.args, { user_id: '2837622', phone: '555-000-1111' });
  assert.deepEqual(item.preview, { customer: { id: '2837622', name: 'Priya Patel', email: 'priya@candy.com', phone: '987-654-3210' } });
});

test('an order that does not exist opens its approval without a preview', async () => {
  const { item } = await approvalFor('cancel order 99999');
  assert.equal(item.tool, 'cancel_order');
  assert.equal(item.preview, undefined);
});

test('the OpenAPI document declares the preview on a pending item', async () => {
  const doc = (await app.call('GET', '/openapi.json')).body;
  const item = doc.components.schemas.Conversation.properties.pending.items;
  assert.match(item.properties.preview.description, /^approval: what the call would touch/);
  assert.ok(!item.required.includes('preview'), 'an item without one is still an item');
});
