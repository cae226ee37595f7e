// A support conversation end to end with each provider beyond Gemini: the real turn engine (workflows on the
// Temporal dev server, PostgreSQL), the official SDK against the wire server the test scripts. A lookup, a
// cancel parked for approval and approved, the usage counted, and Stop closing the model's stream mid-reply.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeAnthropic } from '../support/fake-anthropic.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { type FakeWire, wireReply as reply } from '../support/fake-wire.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const KEY = 'sk-provider-test-key-0123456789';

const PROVIDERS = [
  {
    name: 'OpenAI',
    model: 'gpt-4.1-mini',
    start: () => startFakeOpenAi({ apiKey: KEY }),
    env: (url: string) => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: url, OPENAI_MODEL: 'gpt-4.1-mini' }),
  },
  {
    name: 'Anthropic',
    model: 'claude-haiku-4-5',
    start: () => startFakeAnthropic({ apiKey: KEY }),
    env: (url: string) => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ANTHROPIC_MODEL: 'claude-haiku-4-5' }),
  },
];

for (const provider of PROVIDERS) {
  describe(`a support conversation over ${provider.name}`, () => {
    let fake: FakeWire;
    let app: TestApp;
    before(async () => {
      fake = await provider.start();
      app = await startTestApp({ env: { ...provider.env(fake.baseUrl), MODEL_TIMEOUT: '10s', MODEL_MAX_ATTEMPTS: '3' } });
    });
    after(async () => {
      await app?.stop();
      await fake?.close();
    });

    test('looks up, cancels with approval, retries a 503, and Stop closes the stream', async () => {
      const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'providers' } });
      assert.equal(created.status, 201);
      const id = created.body.id;
      const say = (text: string) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });

      fake.script(
        reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }),
        reply.text('John Doe has three orders.', { usage: { input: 900, output: 10 } }),
      );
      const lookup = await say('Who is john@gmail.com?');
      assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
      const tool = lookup.body.messages.find((m: any) => m.role === 'tool');
      assert.equal(tool.result.user_info.username, 'johndoe');
      assert.equal(lookup.body.messages.at(-1).text, 'John Doe has three orders.');
      assert.match(JSON.stringify(fake.requests[1]!.body.messages), /johndoe/, 'the tool result went back to the model');

      // a 503 first: Temporal retries the model step, the SDK itself made one request per attempt
      fake.script(
        reply.error(503, 'overloaded'),
        reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }),
        reply.text('Order 13579 is cancelled.'),
      );
      const cancel = await say('Cancel order 13579');
      assert.equal(cancel.body.pending[0]?.kind, 'approval');
      assert.equal(cancel.body.pending[0]?.tool, 'cancel_order');
      assert.deepEqual(cancel.body.pending[0]?.args, { order_id: '13579' });
      const approved = await app.call('POST', `/v1/conversations/${id}/decisions`, {
        body: { pendingId: cancel.body.pending[0].id, decision: 'approve' },
      });
      assert.equal(approved.body.messages.find((m: any) => m.role === 'tool').result.status, 'Cancelled');
      assert.equal(approved.body.messages.at(-1).text, 'Order 13579 is cancelled.');

      const held = reply.hold(reply.text('never sent'));
      fake.script(held);
      const turn = say('Tell me a long story');
      const reached = await held.reached;
      const stopped = await app.call('POST', `/v1/conversations/${id}/stop`);
      assert.deepEqual(stopped.body, { stopped: true });
      const answered = await turn;
      assert.equal(answered.body.stopped, true, JSON.stringify(answered.body));
      assert.equal(await reached.ended, 'closed', 'Stop closed the HTTP stream to the provider');

      // Stop in the middle of a streamed answer: what streamed stays, marked as cut, for the page and the next call
      const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
      fake.script(reply.text(words, { intervalMs: 100 }));
      const before = (await app.call('GET', `/v1/conversations/${id}`)).body.usage;
      const asked = fake.requests.length;
      const streaming = say('Tell me another long story');
      const deadline = Date.now() + 10_000;
      while (fake.requests.length === asked && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      // a few pieces out of forty, 100 ms apart
      await new Promise((resolve) => setTimeout(resolve, 800));
      const stopAnswer = await app.call('POST', `/v1/conversations/${id}/stop`);
      assert.equal(stopAnswer.body.stopped, true);
      const cut = await streaming;
      assert.equal(cut.body.stopped, true, JSON.stringify(cut.body));
      const last = (await app.call('GET', `/v1/conversations/${id}`)).body.messages.at(-1);
      assert.equal(last.role, 'assistant');
      assert.match(last.text, /^word0 word1 /, 'what streamed stays');
      assert.ok(!last.text.includes('word39'), 'the answer was cut');
      assert.equal(last.stopped, true, `the cut reply is marked: ${JSON.stringify(last)}`);
      // the provider never said what the cut call used: what it was sent and what streamed are counted, estimated
      const after = (await app.call('GET', `/v1/conversations/${id}`)).body.usage;
      assert.equal(after.calls, before.calls + 1, 'the stopped call is counted');
      assert.ok(after.outputTokens > before.outputTokens, `what streamed is counted: ${JSON.stringify({ before, after })}`);
      assert.ok(after.inputTokens > before.inputTokens, 'what it was sent is counted');

      fake.script(reply.text('Hello again.'));
      assert.equal((await say('Hello?')).body.messages.at(-1).text, 'Hello again.');
      const replayed = fake.requests.at(-1)!.body;
      assert.equal(replayed.model, provider.model);
      assert.match(
        JSON.stringify(replayed.messages),
        /Order 13579 is cancelled\./,
        'the whole transcript, calls and results paired, went out again',
      );

      const view = await app.call('GET', `/v1/conversations/${id}`);
      assert.ok(view.body.usage.inputTokens >= 900, JSON.stringify(view.body.usage));
      const meta = await app.call('GET', '/v1/meta');
      assert.equal(meta.body.model, provider.model);
    });
  });
}
