// Text PostgreSQL cannot store, when it comes from the model rather than a client: it is made storable
// (NUL and unpaired surrogates become U+FFFD), so a reply never fails the write that records it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { readSse } from '../support/sse.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp({ checkKey: true, env: { MODEL_MAX_ATTEMPTS: '2', MODEL_TIMEOUT: '10s' } }, (parts) => void ({ fake, app } = parts));

test('a model reply and tool arguments with NUL and lone surrogates are stored, repaired, and the turn ends', async () => {
  // titled, so no title activity runs after the turn while the app shuts down
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Unstorable text' } });
  const id = created.body.id;
  fake.script(
    reply.calls({ name: 'get_user_info', args: { key: 'username', value: 'john\u0000doe' } }),
    reply.text(['Found \u0000 nobody ', 'by that name \ud83d.']),
  );
  const stream = readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
    token: ALICE,
    until: (events) => events.some((e) => e.event === 'turn.ended'),
  });
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'who is johndoe?' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));

  const view = await app.call('GET', `/v1/conversations/${id}`);
  const [user, call, tool, answer] = view.body.messages;
  assert.equal(user.text, 'who is johndoe?');
  assert.deepEqual(call.toolCalls[0].args, { key: 'username', value: 'john\uFFFDdoe' });
  assert.deepEqual(tool.args, { key: 'username', value: 'john\uFFFDdoe' });
  assert.equal(answer.role, 'assistant');
  assert.equal(answer.text, 'Found \uFFFD nobody by that name \uFFFD.');
  assert.doesNotMatch(JSON.stringify(view.body), /could not answer|invalid byte sequence|Unicode/);

  const events = await stream;
  assert.ok(
    events.some((e) => e.event === 'turn.ended'),
    'turn.ended was sent',
  );
});
