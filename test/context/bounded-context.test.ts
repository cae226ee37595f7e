// Issue 44: conversations without an end. The conversation of the issue (twenty 120 KB tool results in each of
// two turns, the model refusing any request past a small window, as Gemini answers 400 past its window) goes on
// answering; the model sees the summary plus the recent turns, and `recall` reads an elided result back; input
// per call stays flat once the budget is reached while every message stays in the transcript; the offline model
// compacts too. Real Temporal, PostgreSQL, the real @google/genai client against the Gemini-wire test server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type FakeGemini,
  type FakeReply,
  type RecordedRequest,
  endsWithToolResults,
  lastContent,
  reply,
  startFakeGemini,
} from '../support/fake-gemini.ts';
import { type BulkyHttp, startBulkyHttp } from '../support/mcp-bulky.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

/** the model's window as the fake enforces it: any request body past it is refused as Gemini refuses one */
const REFUSE_OVER_BYTES = 100_000;
/** where the fake refuses now: a test lowers it to a model that counts more tokens than the estimate */
let refuseOver = REFUSE_OVER_BYTES;
const BUDGET = 16_000;

const bodyBytes = (request: RecordedRequest) => Buffer.byteLength(JSON.stringify(request.body));
const isSummaryRequest = (request: RecordedRequest) => JSON.stringify(request.body.contents ?? []).includes('<previous-summary>');
const isChat = (request: RecordedRequest) => request.stream && !isSummaryRequest(request);
const userText = (request: RecordedRequest) => (lastContent(request)?.parts ?? []).map((part) => part.text ?? '').join('');

/** The fake model: refuses what is too long, summarises, and answers by what the person asked. */
function model(request: RecordedRequest): FakeReply {
  const bytes = bodyBytes(request);
  if (bytes > refuseOver)
    return reply.error(
      400,
      `The input token count (${Math.ceil(bytes / 4)}) exceeds the maximum number of tokens allowed (${refuseOver / 4}).`,
    );
  if (isSummaryRequest(request)) return reply.text(`Summary v${request.index}: the person had bulky things dumped and read.`);
  if (endsWithToolResults(request)) return reply.text('Read them.');
  const said = userText(request);
  const dump = /^Dump twenty (\w+)/.exec(said);
  if (dump)
    return reply.calls(...Array.from({ length: 20 }, (_, i) => ({ name: 'bulky__dump', args: { tag: `${dump[1]}${i}`, kb: 120 } })));
  if (said.startsWith('Recall')) {
    const stub = /\\?"elided\\?":true,\\?"id\\?":\\?"([^"\\]+)/.exec(JSON.stringify(request.body.contents));
    if (stub) return reply.calls({ name: 'recall', args: { id: stub[1]! } });
    return reply.text('Nothing to recall.');
  }
  return reply.text(`Answered: ${said.slice(0, 20)}`);
}

let fake: FakeGemini;
let bulky: BulkyHttp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-context-'));

before(async () => {
  fake = await startFakeGemini();
  // summary requests reach the script: this test is about them
  fake.scriptSummaries = true;
  fake.scriptFn(model);
  bulky = await startBulkyHttp();
});
after(async () => {
  await bulky?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function open(app: TestApp): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'long' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
}
async function say(app: TestApp, id: string, text: string) {
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body).slice(0, 2000));
  return turn.body;
}
async function summaries(app: TestApp, id: string): Promise<number> {
  return Number((await app.adminQuery('SELECT count(*) FROM conversation_summaries WHERE conversation_id = $1', [id]))[0].count);
}
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('with a model whose window is small', () => {
  let app: TestApp;
  before(async () => {
    const configPath = path.join(dir, 'mcp.json');
    fs.writeFileSync(configPath, JSON.stringify({ mcpServers: { bulky: { url: bulky.url, agents: ['support'] } } }));
    app = await startTestApp({
      env: {
        GEMINI_API_KEY: 'context-key',
        GEMINI_BASE_URL: fake.baseUrl,
        MODEL_TIMEOUT: '60s',
        BRIGADE_MCP_CONFIG: configPath,
        MODEL_CONTEXT_TOKENS: String(BUDGET),
        DATA_DIR: path.join(dir, 'data'),
      },
    });
  });
  after(async () => app?.stop());

  test('two turns of twenty 120 KB results go on answering; the model then sees the summary and the recent turns, and recall reads an elided result', async (t) => {
    const id = await open(app);
    const first = await say(app, id, 'Dump twenty alpha things');
    assert.equal(first.messages.at(-1).text, 'Read them.');
    assert.deepEqual((await app.call('GET', `/v1/conversations/${id}`)).body.context, { summarized: false });
    assert.equal((await app.call('GET', `/v1/conversations/${id}/context-summary`)).status, 404);
    const second = await say(app, id, 'Dump twenty beta things');
    assert.equal(second.messages.at(-1).text, 'Read them.');
    const chats = fake.requests.filter(isChat);
    t.diagnostic(`request bodies of the two turns: ${chats.map(bodyBytes).join(', ')} bytes; refused past ${REFUSE_OVER_BYTES}`);
    assert.ok(
      chats.every((request) => bodyBytes(request) <= REFUSE_OVER_BYTES),
      'no request of the turns was past the window',
    );

    // folded after the second turn's answer: the first turn
    await waitFor('the summary', async () => (await summaries(app, id)) === 1);
    const got = await app.call('GET', `/v1/conversations/${id}`);
    const alphaEnd = got.body.messages.findIndex((message: any) => message.text === 'Read them.');
    assert.deepEqual(got.body.context, { summarized: true, throughMessageId: got.body.messages[alphaEnd].id });
    const summary = await app.call('GET', `/v1/conversations/${id}/context-summary`);
    assert.equal(summary.status, 200);
    assert.match(summary.body.text, /^Summary v\d+/);
    assert.equal(summary.body.version, 1);
    assert.equal(summary.body.throughMessageId, got.body.messages[alphaEnd].id);

    // the model sees the summary and the recent turn, and asks for a result it sees as a stub: recall reads it back
    const before = fake.requests.length;
    const recalled = await say(app, id, 'Recall one of them');
    const seen = fake.requests.slice(before).filter(isChat)[0]!;
    const system = (seen.body.systemInstruction?.parts ?? []).map((part) => part.text).join('');
    assert.match(system, /## Earlier in this conversation \(a summary[^\n]*\nSummary v\d+: the person had bulky things dumped and read\./);
    const contents = JSON.stringify(seen.body.contents);
    assert.ok(!contents.includes('Dump twenty alpha things'), 'the folded turn is not sent');
    assert.ok(contents.includes('Dump twenty beta things'), 'the recent turn is');
    assert.ok(bodyBytes(seen) <= REFUSE_OVER_BYTES);
    assert.ok(
      seen.body.tools?.[0]?.functionDeclarations?.some((declaration) => declaration.name === 'recall'),
      'recall is offered',
    );
    const call = recalled.messages.find((message: any) => message.toolCalls?.[0]?.name === 'recall');
    assert.ok(call, 'the model called recall');
    const wanted = call.toolCalls[0].args.id as string;
    const stored = (await app.call('GET', `/v1/conversations/${id}`)).body.messages;
    const original = stored.find((message: any) => message.id === wanted);
    assert.equal(original.role, 'tool');
    const record = await app.adminQuery("SELECT result FROM tool_calls WHERE conversation_id = $1 AND tool = 'recall'", [id]);
    assert.deepEqual(record[0].result, { id: wanted, tool: 'bulky__dump', result: original.result });
    const readBack = fake.requests.filter(isChat).at(-1)!;
    const head = JSON.stringify(original.result).slice(0, 60);
    assert.ok(
      JSON.stringify(readBack.body.contents).includes(JSON.stringify(head).slice(1, -1)),
      "the recalled result's beginning reached the model",
    );

    // the transcript is whole: forty results, the recall's and every message
    assert.equal(stored.filter((message: any) => message.role === 'tool').length, 41);
    assert.equal(stored.filter((message: any) => message.role === 'user').length, 3);
    assert.equal(recalled.messages.at(-1).text, 'Read them.');
  });

  test('thirty turns: input per call stays flat once the budget is reached, and every message is still in the transcript', async (t) => {
    const id = await open(app);
    const filler = 'The weather report says it will rain and then clear up by the evening. '.repeat(60).trim();
    const sizes: number[] = [];
    for (let n = 1; n <= 30; n += 1) {
      const before = fake.requests.length;
      const text = `Turn ${n}. ${filler}`;
      const turn = await say(app, id, text);
      assert.equal(turn.messages.at(-1).text, `Answered: ${text.slice(0, 20)}`);
      sizes.push(bodyBytes(fake.requests.slice(before).filter(isChat).at(-1)!));
    }
    t.diagnostic(`request bytes per turn: ${sizes.join(', ')}`);
    const whole = sizes.length * Buffer.byteLength(filler);
    const last = sizes.slice(-10);
    assert.ok(Math.max(...last) <= BUDGET * 4 + 20_000, `the last calls stay within the budget (${Math.max(...last)} bytes)`);
    assert.ok(Math.max(...last) < whole / 2, `far below the whole transcript (${whole} bytes)`);
    assert.ok(Math.max(...last) / Math.min(...last) < 2.5, `within a band: ${Math.min(...last)}..${Math.max(...last)}`);
    assert.ok((await summaries(app, id)) >= 2, 'folded more than once');
    const got = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(got.body.messages.length, 60, 'every message is in the transcript');
    assert.equal(got.body.messages[0].text, `Turn 1. ${filler}`);
  });
});

describe('a model that counts more than the estimate', () => {
  let app: TestApp;
  before(async () => {
    const configPath = path.join(dir, 'mcp-2.json');
    fs.writeFileSync(configPath, JSON.stringify({ mcpServers: { bulky: { url: bulky.url, agents: ['support'] } } }));
    app = await startTestApp({
      env: {
        GEMINI_API_KEY: 'context-key',
        GEMINI_BASE_URL: fake.baseUrl,
        BRIGADE_MCP_CONFIG: configPath,
        MODEL_CONTEXT_TOKENS: String(BUDGET),
      },
    });
  });
  after(async () => {
    refuseOver = REFUSE_OVER_BYTES;
    await app?.stop();
  });

  test('its "too long" answer makes the step ask again once with half the window, and the turn answers', async () => {
    refuseOver = 40_000;
    const id = await open(app);
    const before = fake.requests.length;
    const turn = await say(app, id, 'Dump twenty gamma things');
    assert.equal(turn.messages.at(-1).text, 'Read them.');
    const sizes = fake.requests.slice(before).filter(isChat).map(bodyBytes);
    assert.ok(
      sizes.some((bytes) => bytes > refuseOver),
      `one request was refused (${sizes.join(', ')})`,
    );
    assert.ok(sizes.at(-1)! <= refuseOver, 'the one asked again fitted');
  });
});

describe('the offline model (npm start)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { MODEL_CONTEXT_TOKENS: '3000' } });
  });
  after(async () => app?.stop());

  test('compacts too, deterministically: a summary of first sentences, and the conversation goes on', async () => {
    const id = await open(app);
    const filler = ' It is written here at length so that the turns fill the window.'.repeat(25);
    for (let n = 1; n <= 8; n += 1) await say(app, id, `Fact ${n}: the locker code is ${n}${n}0${n}.${filler}`);
    await waitFor('a summary', async () => (await summaries(app, id)) >= 1);
    const summary = await app.call('GET', `/v1/conversations/${id}/context-summary`);
    assert.equal(summary.status, 200);
    assert.match(summary.body.text, /^- The person said: Fact 1: the locker code is 1101\.$/m);
    const rows = await app.adminQuery('SELECT model FROM conversation_summaries WHERE conversation_id = $1', [id]);
    assert.equal(rows[0].model, 'offline');
    const got = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(got.body.messages.length, 16);
    assert.equal(got.body.context.summarized, true);
  });
});
