// An approval nobody decides expires at its deadline: the tool's policy applies (reject), the model
// hears why, and a late decision is refused as no longer pending.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { waitUntilIdle } from '../support/scenarios.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ env: { APPROVAL_TIMEOUT: '1s' } });
});
after(async () => {
  await app?.stop();
});

test('an undecided approval expires into a rejection and a late decision is 409', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id;
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'cancel order 13579' } });
  const [item] = turn.body.pending;
  const lifetime = Date.parse(item.expiresAt) - Date.now();
  assert.ok(lifetime > 0 && lifetime <= 1_000, `expires within the configured second (${lifetime} ms)`);

  await waitUntilIdle(app, id);
  const view = await app.call('GET', `/v1/conversations/${id}`);
  const tool = view.body.messages.find((m: { role: string }) => m.role === 'tool');
  assert.equal(tool.result.status, 'rejected');
  assert.match(tool.result.error, /No decision before the deadline/);
  assert.match(view.body.messages.at(-1).text, /^Not done: /);

  const late = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'approve' } });
  assert.equal(late.status, 409);
  assert.match(late.body.error, /expired/);
});
