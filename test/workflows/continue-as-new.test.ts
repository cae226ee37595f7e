// Continue-as-new, forced after two turns: the conversation goes on intact across runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ env: { CONTINUE_AS_NEW_AFTER_TURNS: '2' } });
});
after(async () => {
  await app?.stop();
});

const say = async (id: string, text: string) => {
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return turn.body;
};

test('a conversation continues as new and goes on with its transcript, counters and approvals', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const { id, workflowId } = created.body;
  const handle = app.client.workflow.getHandle(workflowId);
  const firstRun = (await handle.describe()).runId;

  await say(id, 'look up johndoe');
  const first = await say(id, 'cancel order 24601');
  const oldItem = first.pending[0].id;
  await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: oldItem, decision: 'reject', reason: 'no' } });
  // The run closes after its second turn; the next message lands on the new run.
  const turn = await say(id, 'cancel order 47652');
  const secondRun = (await handle.describe()).runId;
  assert.notEqual(secondRun, firstRun);
  const closedRun = await app.client.workflow.getHandle(workflowId, firstRun).describe();
  assert.equal(closedRun.status.name, 'CONTINUED_AS_NEW');
  const stale = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: oldItem, decision: 'approve' } });
  assert.equal(stale.status, 409, 'an item closed in the previous run is still known as decided');

  const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: turn.pending[0].id, decision: 'approve' },
  });
  assert.equal(decided.status, 200);
  assert.equal(decided.body.messages.find((m: { role: string }) => m.role === 'tool').result.status, 'Cancelled');

  const again = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: turn.pending[0].id, decision: 'approve' },
  });
  assert.equal(again.status, 409);

  const view = await app.call('GET', `/v1/conversations/${id}`);
  const users = view.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
  assert.deepEqual(users, ['look up johndoe', 'cancel order 24601', 'cancel order 47652']);
  // six chat calls and the title's: the conversation's usage is every call made for it (the usage ledger)
  assert.equal(view.body.usage.calls, 7);
  const state = await handle.query<{ turns: number; usage: { calls: number } }>('state');
  assert.equal(state.turns, 3, 'turns carried across runs');
  assert.equal(state.usage.calls, 6, 'usage carried across runs');
});
