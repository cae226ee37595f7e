// Continue-as-new, forced after two turns: the conversation goes on intact across runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from './support/test-app.ts';

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
  await say(id, 'status of order 24601');
  // The run closes after its second turn; the next message lands on the new run.
  const turn = await say(id, 'cancel order 47652');
  const secondRun = (await handle.describe()).runId;
  assert.notEqual(secondRun, firstRun);
  const first = await app.client.workflow.getHandle(workflowId, firstRun).describe();
  assert.equal(first.status.name, 'CONTINUED_AS_NEW');

  const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: turn.pending[0].id, decision: 'approve' },
  });
  assert.equal(decided.status, 200);
  assert.equal(decided.body.messages.find((m: { role: string }) => m.role === 'tool').result.status, 'Cancelled');

  const view = await app.call('GET', `/v1/conversations/${id}`);
  const users = view.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
  assert.deepEqual(users, ['look up johndoe', 'status of order 24601', 'cancel order 47652']);
  assert.equal(view.body.usage.calls, 6);
  const state = await handle.query<{ turns: number; usage: { calls: number } }>('state');
  assert.equal(state.turns, 3, 'turns carried across runs');
  assert.equal(state.usage.calls, 6, 'usage carried across runs');
});
