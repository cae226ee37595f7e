// A message while the turn waits for a person decides nothing by accident (issue 46, item 3): without
// `pending` it is refused with a 409 that names the open items; `decline` makes it the reason for every one
// of them, the reply's later gated calls included (300 in one reply: one message, no second park); `keep`
// holds it in the conversation, through a worker restart, and sends it as the next turn once the items are decided.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import type { TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp({ checkKey: true, env: { MODEL_TIMEOUT: '20s' } }, (parts) => void ({ fake, app } = parts));
beforeEach(() => fake.reset());

type Message = { role: string; text: string; tool?: string; callId?: string; result?: { status?: string; error?: string } };

async function conversation(): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'pending' } });
  assert.equal(created.status, 201);
  return created.body.id;
}
const send = (id: string, body: Record<string, unknown>) => app.call('POST', `/v1/conversations/${id}/messages`, { body });
const view = async (id: string) => (await app.call('GET', `/v1/conversations/${id}`)).body;

async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms (${JSON.stringify(value).slice(0, 500)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a message without `pending` while an approval waits is refused with 409 naming the item; nothing is decided', async () => {
  const id = await conversation();
  fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }));
  const parked = await send(id, { text: 'cancel order 13579' });
  assert.equal(parked.status, 200, JSON.stringify(parked.body));
  const [item] = parked.body.pending;
  assert.equal(item?.kind, 'approval');

  const refused = await send(id, { text: 'hmm, wait' });
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.error, new RegExp(`waits for your decision on an approval of cancel_order \\(${item.id}\\)`));
  assert.match(refused.body.error, /"pending": "decline".*"pending": "keep"/);
  assert.deepEqual(refused.body.fields, [{ field: item.id, message: 'approval of cancel_order' }]);

  const after = await view(id);
  assert.equal(after.status, 'waiting');
  assert.deepEqual(
    after.pending.map((p: { id: string }) => p.id),
    [item.id],
    'the approval still waits',
  );
  assert.ok(!after.messages.some((m: Message) => m.text === 'hmm, wait'), 'the refused message is not in the transcript');
});

test('`decline` declines all 300 gated calls of one reply with one message, and the turn does not park again', async () => {
  const id = await conversation();
  const calls = Array.from({ length: 300 }, (_, i) => ({ name: 'cancel_order', args: { order_id: String(10_000 + i) } }));
  fake.script(reply.calls(...calls), reply.text('Understood: nothing was cancelled.'));
  const parked = await send(id, { text: 'cancel all of those orders' });
  assert.equal(parked.status, 200, JSON.stringify(parked.body).slice(0, 500));
  assert.equal(parked.body.pending.length, 1, 'the first call asks');
  const first = parked.body.pending[0];

  const declined = await send(id, { text: 'no, none of them', pending: 'decline' });
  assert.equal(declined.status, 200, JSON.stringify(declined.body).slice(0, 500));
  assert.deepEqual(declined.body.pending, [], 'no second approval opened');
  assert.equal(declined.body.declined.length, 300);
  assert.deepEqual(declined.body.declined[0], { kind: 'approval', tool: 'cancel_order', callId: first.callId, pendingId: first.id });
  assert.ok(declined.body.declined.slice(1).every((d: { pendingId?: string }) => d.pendingId === undefined));
  assert.equal(new Set(declined.body.declined.map((d: { callId: string }) => d.callId)).size, 300);

  const transcript: Message[] = (await view(id)).messages;
  const results = transcript.filter((m) => m.role === 'tool' && m.tool === 'cancel_order');
  assert.equal(results.length, 300);
  assert.ok(
    results.every((m) => m.result?.status === 'rejected' && /no, none of them/.test(m.result.error ?? '')),
    'each call is refused with the message as its reason',
  );
  assert.equal(transcript.at(-1)?.text, 'Understood: nothing was cancelled.');
  assert.equal((await view(id)).status, 'idle');
  const rows = await app.adminQuery(`SELECT count(*)::int AS n FROM orders WHERE id >= '10000' AND id < '10300' AND status = 'Cancelled'`);
  assert.equal(rows[0].n, 0);
});

test('`decline` answers every open item of the turn, whatever its words would say to a question', async () => {
  const id = await conversation();
  fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), reply.text('Not cancelled.'));
  const parked = await send(id, { text: 'cancel order 13579' });
  const declined = await send(id, { text: 'yes, but not now', pending: 'decline' });
  assert.equal(declined.status, 200, JSON.stringify(declined.body));
  assert.deepEqual(
    declined.body.declined.map((d: { pendingId: string }) => d.pendingId),
    [parked.body.pending[0].id],
  );
  const tool = declined.body.messages.find((m: Message) => m.tool === 'cancel_order');
  assert.equal(tool.result.status, 'rejected');
});

test('`keep` holds the message through a worker restart and sends it as the next turn once the item is decided', async () => {
  const id = await conversation();
  fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }));
  const parked = await send(id, { text: 'cancel order 13579' });
  const [item] = parked.body.pending;

  const kept = await send(id, { text: 'then look up john@gmail.com', pending: 'keep' });
  assert.equal(kept.status, 200, JSON.stringify(kept.body));
  assert.equal(kept.body.held.text, 'then look up john@gmail.com');
  assert.deepEqual(kept.body.messages, []);
  assert.deepEqual(
    kept.body.pending.map((p: { id: string }) => p.id),
    [item.id],
    'the approval still waits',
  );
  assert.equal((await view(id)).held?.text, 'then look up john@gmail.com', 'a reload shows the held message');
  const second = await send(id, { text: 'and another', pending: 'keep' });
  assert.equal(second.status, 409, 'one held message at a time');

  // The held message lives in the workflow: a new worker that replays the conversation still has it.
  await app.stopWorker();
  await app.startWorker();

  fake.script(reply.text('Order 13579 is cancelled.'), reply.text('John Doe is johndoe.'));
  const approved = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'approve' } });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  const done = await until(
    'the held message answered',
    () => view(id),
    (v) => v.status === 'idle' && v.messages.at(-1)?.text === 'John Doe is johndoe.',
  );
  const texts = done.messages.filter((m: Message) => m.role !== 'tool').map((m: Message) => m.text);
  assert.deepEqual(texts.slice(-3), ['Order 13579 is cancelled.', 'then look up john@gmail.com', 'John Doe is johndoe.']);
  assert.equal(done.held, undefined);
});
