// The real durations of issue 43, on the settings `npm start` runs (MODEL_TIMEOUT 60 s, MODEL_IDLE_TIMEOUT 30 s,
// the hand-off after 2 s): an answer that streams for 150 s completes once, and Stop at 100 s of another ends its
// turn within 1.5 s, over the Gemini wire (@google/genai) and the OpenAI wire (the openai SDK) at once. The short
// versions of each behaviour are in long-answers.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type FakeGemini, reply as gemini, startFakeGemini } from '../support/fake-gemini.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { type FakeWire, wireReply as openai } from '../support/fake-wire.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const KEY = 'sk-real-time-test-key-0123456789';
const SECONDS = 150;
const STOP_AT_MS = 100_000;
const pieces = Array.from({ length: SECONDS }, (_, i) => `second ${i + 1}. `);

let fakeGemini: FakeGemini;
let fakeOpenAi: FakeWire;
let geminiApp: TestApp;
let openAiApp: TestApp;

before(async () => {
  fakeGemini = await startFakeGemini();
  fakeOpenAi = await startFakeOpenAi({ apiKey: KEY });
  [geminiApp, openAiApp] = await Promise.all([
    startTestApp({ env: { GEMINI_API_KEY: KEY, GEMINI_BASE_URL: fakeGemini.baseUrl } }),
    startTestApp({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fakeOpenAi.baseUrl } }),
  ]);
});
after(async () => {
  await Promise.all([geminiApp?.stop(), openAiApp?.stop()]);
  await Promise.all([fakeGemini?.close(), fakeOpenAi?.close()]);
});

interface Run {
  app: TestApp;
  /** the chat requests the model server got that carry `text` */
  requests: (text: string) => number;
}

async function longAnswer({ app, requests }: Run, stopAtMs?: number) {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id as string;
  const text = `Count the seconds, slowly (${id}).`;
  const handle = app.client.workflow.getHandle(`conversation-${id}`);
  const historyBefore = (await handle.fetchHistory()).events?.length ?? 0;
  const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  if (stopAtMs === undefined) {
    const answered = await turn;
    return { id, answered, historyGrowth: ((await handle.fetchHistory()).events?.length ?? 0) - historyBefore, calls: requests(text) };
  }
  await new Promise((resolve) => setTimeout(resolve, stopAtMs));
  const stopAsked = Date.now();
  const stop = await app.call('POST', `/v1/conversations/${id}/stop`);
  const answered = await turn;
  return { id, answered, stop, stoppedWithinMs: Date.now() - stopAsked, calls: requests(text) };
}

test(`a ${SECONDS} s streamed answer completes once, and Stop at ${STOP_AT_MS / 1000} s of another ends it within 1.5 s, over Gemini and OpenAI`, async () => {
  const carrying = (requests: { body: unknown }[], text: string) => requests.filter((r) => JSON.stringify(r.body).includes(text)).length;
  const gem: Run = { app: geminiApp, requests: (text) => carrying(fakeGemini.requests, text) };
  const oai: Run = {
    app: openAiApp,
    requests: (text) =>
      carrying(
        fakeOpenAi.requests.filter((r) => r.stream),
        text,
      ),
  };
  // each server answers its two conversations' chat calls with the same slow stream, a piece a second (the
  // Gemini server answers title requests itself; the OpenAI one gets them unstreamed)
  fakeGemini.scriptFn(() => gemini.text(pieces, { intervalMs: 1000 }));
  fakeOpenAi.scriptFn((request) => (request.stream ? openai.text(pieces, { intervalMs: 1000 }) : openai.text('Counting seconds')));
  const [gemWhole, gemStopped, oaiWhole, oaiStopped] = await Promise.all([
    longAnswer(gem),
    longAnswer(gem, STOP_AT_MS),
    longAnswer(oai),
    longAnswer(oai, STOP_AT_MS),
  ]);
  for (const [name, run, app] of [
    ['Gemini', gemWhole, geminiApp],
    ['OpenAI', oaiWhole, openAiApp],
  ] as const) {
    assert.equal(run.answered.status, 200, `${name}: ${JSON.stringify(run.answered.body).slice(0, 500)}`);
    assert.equal(run.answered.body.messages.at(-1).text, pieces.join(''), `${name}: the whole answer`);
    assert.equal(run.calls, 1, `${name}: one model request`);
    const deltas = await app.adminQuery(
      "SELECT data->>'text' AS text, (data->>'attempt')::int AS attempt FROM events WHERE conversation_id = $1 AND type = 'message.delta' ORDER BY id",
      [run.id],
    );
    assert.ok(
      deltas.every((row) => row.attempt === 1),
      `${name}: one attempt`,
    );
    assert.equal(deltas.map((row) => row.text).join(''), pieces.join(''), `${name}: the text once on the event stream`);
    // the Update, the step handed off after 2 s (a local activity's marker, then an activity's three events),
    // and the workflow tasks around them: the same count as a turn of a second
    assert.ok(run.historyGrowth! <= 20, `${name}: ${run.historyGrowth} history events for a ${SECONDS} s turn`);
  }
  for (const [name, run] of [
    ['Gemini', gemStopped],
    ['OpenAI', oaiStopped],
  ] as const) {
    assert.equal(run.stop!.body.stopped, true, name);
    assert.equal(run.answered.body.stopped, true, `${name}: ${JSON.stringify(run.answered.body).slice(0, 500)}`);
    assert.ok(run.stoppedWithinMs! < 1500, `${name}: the turn ended ${run.stoppedWithinMs} ms after Stop`);
    const last = (await (name === 'Gemini' ? geminiApp : openAiApp).call('GET', `/v1/conversations/${run.id}`)).body.messages.at(-1);
    assert.equal(last.stopped, true, `${name}: the cut reply is marked`);
    assert.match(last.text, /^second 1\. second 2\. /);
    assert.ok(!last.text.includes(`second ${SECONDS}.`), `${name}: cut before its end`);
  }
});
