// A decision and a chat message sent at the same moment: exactly one of them wins the item, and the other gets
// an honest answer (issue 6, class 7): a refusal, or, for a message the workflow takes once the decision's turn
// has ended, a turn of its own. Before, both could answer 200 with the same body (the decision's reply
// carried the message and skipped the approved action's result), or the decision got "decided" for an item
// that a message had answered.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

const orderStatus = async (orderId: string): Promise<string> =>
  (await app.adminQuery('SELECT status FROM orders WHERE id = $1', [orderId]))[0].status;
const resetOrder = (orderId: string) => app.adminQuery(`UPDATE orders SET status = 'Processing' WHERE id = $1`, [orderId]);

type Message = { role: string; id: string; text: string; tool?: string; result?: { status?: string } };

test('a decision racing a message: one wins, the other is told what really happened', async () => {
  const outcomes = { decisionWon: 0, messageWon: 0, messageRefused: 0 };
  for (let round = 1; round <= 15; round++) {
    await resetOrder('19283');
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
    const id = created.body.id;
    const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'cancel order 19283' } });
    const [item] = turn.body.pending;
    assert.ok(item, 'the cancel waits for approval');

    const [decision, message] = await Promise.all([
      app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'approve' } }),
      app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: `round ${round}: never mind`, pending: 'decline' } }),
    ]);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    const messages: Message[] = view.body.messages;
    const userMessages = messages.filter((m) => m.role === 'user').map((m) => m.text);
    const cancel = messages.find((m) => m.tool === 'cancel_order');
    assert.ok(cancel, 'the call always gets its result');

    if (decision.status === 200) {
      outcomes.decisionWon += 1;
      if (message.status === 409) {
        // The message came while the approved turn ran: refused honestly, and not in the transcript.
        outcomes.messageRefused += 1;
        assert.match(message.body.error, /turn is already running/);
        assert.deepEqual(userMessages, ['cancel order 19283']);
      } else {
        // The workflow took the message once the approved turn had ended (its model step runs within the
        // decision's workflow task): the next turn, answering only itself.
        assert.equal(message.status, 200, JSON.stringify(message.body));
        assert.deepEqual(userMessages, ['cancel order 19283', `round ${round}: never mind`]);
        assert.equal(message.body.messages[0].text, `round ${round}: never mind`);
        assert.ok(!message.body.messages.some((m: Message) => m.tool === 'cancel_order'), 'the next turn carries no decision');
      }
      assert.notEqual(cancel.result?.status, 'rejected');
      assert.equal(await orderStatus('19283'), 'Cancelled');
      // The decision's answer is its own: the approved action's result and the reply to it.
      const answered: Message[] = decision.body.messages;
      assert.ok(
        answered.some((m) => m.tool === 'cancel_order'),
        'the decision answer carries the tool result',
      );
      assert.ok(!answered.some((m) => m.role === 'user'), 'the decision answer carries no user message');
    } else {
      outcomes.messageWon += 1;
      // The decision lost to the message, and says so rather than "decided".
      assert.equal(decision.status, 409, JSON.stringify(decision.body));
      assert.match(decision.body.error, /answered by a chat message|superseded/);
      assert.equal(message.status, 200);
      assert.deepEqual(userMessages, ['cancel order 19283', `round ${round}: never mind`]);
      assert.equal(cancel.result?.status, 'rejected');
      assert.equal(await orderStatus('19283'), 'Processing');
    }
    assert.equal(view.body.status, 'idle');
  }
  assert.equal(outcomes.decisionWon + outcomes.messageWon, 15);
});
