// A message too large for the model's context on its own (issue 44, item 7) is cut for the model with a note, and the
// person is told too (a `context.cut` event, which the web client shows under the message); the transcript keeps it
// whole and the conversation goes on. The offline model and a small MODEL_CONTEXT_TOKENS: the path `npm start` takes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ env: { MODEL_CONTEXT_TOKENS: '2000' } });
});
after(async () => app?.stop());

test('a message larger than the window: the model reads its beginning, the person is told, nothing is lost', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id as string;
  // under the API's 20,000 characters, over the window's 2,000 tokens (about 8,000 bytes)
  const huge = `Please read all of this. ${'Every word of this long message matters to me. '.repeat(350)}`;
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: huge } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body).slice(0, 500));
  const userMessage = turn.body.messages.find((message: { role: string }) => message.role === 'user');
  const told = await app.adminQuery("SELECT data FROM events WHERE conversation_id = $1 AND type = 'context.cut'", [id]);
  assert.deepEqual(
    told.map((row) => row.data),
    [{ messageId: userMessage.id }],
  );
  const view = await app.call('GET', `/v1/conversations/${id}`);
  assert.ok(view.body.messages[0].text === huge.trim(), 'the transcript keeps it whole (trimmed, as every message is)');
  const next = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'hello' } });
  assert.equal(next.status, 200);
  assert.equal(next.body.messages.at(-1).role, 'assistant');
});
