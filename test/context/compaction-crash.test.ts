// Issue 44: a worker killed while the model writes a conversation's summary loses nothing, and the summary is
// written once (and charged once) by the attempt that runs again on a new worker. The worker is the real
// `npm run worker` in a child process; the model is the real @google/genai client against the Gemini-wire
// test server, which holds the summary call while the worker is killed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  type FakeGemini,
  type FakeReply,
  type HoldReply,
  type RecordedRequest,
  lastContent,
  reply,
  startFakeGemini,
} from '../support/fake-gemini.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { killWorker, startWorkerProcess } from '../support/worker-process.ts';

let fake: FakeGemini;
let app: TestApp;
const env = () => ({ GEMINI_API_KEY: 'compaction-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '20s', MODEL_CONTEXT_TOKENS: '3000' });
const isSummary = (request: RecordedRequest) => JSON.stringify(request.body.contents ?? []).includes('<previous-summary>');
const held: HoldReply = reply.hold(reply.text('Summary: the person told of twelve facts.'));
let summaryCalls = 0;

before(async () => {
  fake = await startFakeGemini();
  // summary requests reach the script: this test is about them
  fake.scriptSummaries = true;
  fake.scriptFn((request): FakeReply => {
    if (isSummary(request)) return (summaryCalls += 1) === 1 ? held : reply.text('Summary: the person told of twelve facts.');
    const said = (lastContent(request)?.parts ?? []).map((part) => part.text ?? '').join('');
    return reply.text(`Noted: ${said.slice(0, 12)}`);
  });
  app = await startTestApp({ worker: false, env: env() });
});
after(async () => {
  await app?.stop();
  await fake?.close();
});

const count = async (sql: string, params: unknown[]): Promise<number> => Number((await app.adminQuery(sql, params))[0].count);

test('a worker killed during a summary: nothing is lost, and the summary is written and charged once', async () => {
  let worker = await startWorkerProcess(app, env());
  try {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'facts' } });
    const id = created.body.id as string;
    const filler = ' This sentence is here to fill the window of the model.'.repeat(40);
    let turns = 0;
    while (summaryCalls === 0 && turns < 12) {
      turns += 1;
      const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: `Fact ${turns}.${filler}` } });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await held.reached;
    await killWorker(worker);
    held.release();
    assert.equal(
      await count('SELECT count(*) FROM conversation_summaries WHERE conversation_id = $1', [id]),
      0,
      'the killed attempt wrote nothing',
    );
    worker = await startWorkerProcess(app, env());

    const until = Date.now() + 60_000;
    while ((await count('SELECT count(*) FROM conversation_summaries WHERE conversation_id = $1', [id])) === 0) {
      assert.ok(Date.now() < until, 'the summary was written by the attempt run again');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(summaryCalls >= 2, 'the summary was asked for again on the new worker');
    // the conversation goes on with it
    const next = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'One more fact.' } });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    const summaryText = (await app.call('GET', `/v1/conversations/${id}/context-summary`)).body.text;
    assert.equal(summaryText, 'Summary: the person told of twelve facts.');
    assert.equal(await count('SELECT count(*) FROM conversation_summaries WHERE conversation_id = $1', [id]), 1, 'written once');
    assert.equal(
      await count("SELECT count(*) FROM usage_ledger WHERE conversation_id = $1 AND key LIKE 'summary:%'", [id]),
      1,
      'charged once',
    );
    const got = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(got.body.messages.length, 2 * (turns + 1), 'every message is in the transcript');
  } finally {
    await killWorker(worker);
  }
});
