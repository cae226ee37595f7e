// Budgets kept before the call (issue 43, item 2), against real Temporal and PostgreSQL and the Gemini-wire test
// server: a call reserves what it sends (estimated) plus its answer's allowance and is refused when what it sends
// does not fit, so a large request against a small budget ends within one call's answer of the limit; every
// attempt settles (a Stop in a retry wait leaves nothing open); an answer the engine cannot process is counted
// and not retried; and no title is made for a conversation over its budget.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { freePort } from '../../stack/ports.ts';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BUDGET = 8000;
/** the answer's allowance each call reserves (BUDGET_RESERVATION_TOKENS): the most a limit is passed by */
const ANSWER = 1000;

let fake: FakeGemini;
let app: TestApp;

before(async () => {
  fake = await startFakeGemini({ apiKey: 'before-key' });
  app = await startTestApp({
    apiPort: await freePort(),
    env: {
      GEMINI_API_KEY: 'before-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '10s',
      MODEL_MAX_ATTEMPTS: '3',
      TOKEN_BUDGET_PER_CONVERSATION: String(BUDGET),
      BUDGET_RESERVATION_TOKENS: String(ANSWER),
      APPROVAL_TIMEOUT: '60s',
    },
  });
});
after(async () => {
  await app?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

async function open(title?: string): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'support', ...(title ? { title } : {}) } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}
const say = (id: string, text: string) => app.call('POST', `/v1/conversations/${id}/messages`, { token: ALICE, body: { text } });
const ledger = (id: string) =>
  app.adminQuery<{ key: string; settled: boolean; tokens: number }>(
    'SELECT key, settled, tokens::int AS tokens FROM usage_ledger WHERE conversation_id = $1 ORDER BY created_at',
    [id],
  );
const spentIn = async (id: string) => (await ledger(id)).reduce((sum, row) => sum + row.tokens, 0);

describe('budgets kept before the call', () => {
  test('a large request against a small budget ends within one call’s answer of the limit; the next turn parks', async (t) => {
    const id = await open('large request');
    // about 4,900 tokens (the longest message a person may send): the first call fits the 8,000 budget, the
    // second sends it all again and would not
    const large = `Who is john@gmail.com? ${'Here is everything I know about him. '.repeat(520)}`;
    fake.script(reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }), reply.text('John Doe.'));
    const turn = await say(id, large);
    assert.equal(turn.status, 200, JSON.stringify(turn.body));

    const spent = await spentIn(id);
    t.diagnostic(`a ${large.length}-byte request, budget ${BUDGET}: ${fake.requests.length} model call(s), ${spent} tokens spent`);
    assert.equal(fake.requests.length, 1, 'the second call was refused before it was sent');
    assert.ok(spent <= BUDGET + ANSWER, `${spent} tokens spent against a budget of ${BUDGET}`);
    const [item] = turn.body.pending;
    assert.equal(item?.kind, 'budget', JSON.stringify(turn.body));
    assert.equal(item.args.scope, 'conversation');

    const rejected = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      token: ALICE,
      body: { pendingId: item.id, decision: 'reject' },
    });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    const next = await say(id, 'And what did he order?');
    assert.equal(next.body.pending?.[0]?.kind, 'budget', JSON.stringify(next.body));
    assert.equal(fake.requests.length, 1, 'no model call in the next turn either');
    assert.ok(
      (await ledger(id)).every((row) => row.settled),
      'nothing is left reserved',
    );
  });

  test('a Stop during a retry wait leaves no reservation open', async () => {
    const id = await open('retry wait');
    fake.script(reply.error(503), reply.error(503), reply.error(503));
    const turn = say(id, 'Hello?');
    await fake.waitForRequests(2);
    await sleep(300); // the second attempt failed; the step waits a second before the third
    // each failed attempt settled as it failed (at nothing: a 503 bills nothing), not when a later one ends
    const waiting = await ledger(id);
    assert.ok(waiting.length > 0 && waiting.every((row) => row.settled && row.tokens === 0), JSON.stringify(waiting));
    const stopped = await app.call('POST', `/v1/conversations/${id}/stop`, { token: ALICE });
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.equal((await turn).status, 200);
    const rows = await ledger(id);
    assert.ok(rows.length >= 1, JSON.stringify(rows));
    assert.deepEqual(
      rows.filter((row) => !row.settled),
      [],
      'every attempt settled',
    );
    // a 503 billed nothing, and neither did the attempt the Stop reached before it was sent
    assert.equal(await spentIn(id), 0);
  });

  test('an answer nested 10,000 deep costs one model call, is counted, and fails in words', async () => {
    const id = await open('deep answer');
    // as its JSON text: JSON.stringify itself overflows the stack on a value this deep
    const deep = `${'['.repeat(10_000)}"john@gmail.com"${']'.repeat(10_000)}`;
    const call = `{"functionCall":{"name":"get_user_info","args":{"key":"email","value":${deep}}}}`;
    const usage = '{"promptTokenCount":100,"candidatesTokenCount":5000,"totalTokenCount":5100}';
    fake.script(
      reply.chunks(
        `{"candidates":[{"content":{"role":"model","parts":[${call}]},"index":0,"finishReason":"STOP"}],"usageMetadata":${usage}}`,
      ),
    );
    const turn = await say(id, 'Who is john?');
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    await sleep(500);
    assert.equal(fake.requests.length, 1, 'the answer was not asked for again');
    const rows = await ledger(id);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.deepEqual(
      rows.map(({ settled, tokens }) => ({ settled, tokens })),
      [{ settled: true, tokens: 5100 }],
      'the call was counted',
    );
    assert.match(turn.body.messages.at(-1).text, /nested too deep/);
  });

  test('no title is made for a conversation over its budget', async () => {
    const id = await open();
    const view = await app.call('GET', `/v1/conversations/${id}`, { token: ALICE });
    const untitled = view.body.title;
    fake.script(
      reply.text('That was expensive.', { usage: { promptTokenCount: BUDGET, candidatesTokenCount: 10, totalTokenCount: BUDGET + 10 } }),
    );
    assert.equal((await say(id, 'Spend it all')).status, 200);
    await sleep(3000); // a title is made after the first exchange, detached
    assert.equal(fake.titleRequests.length, 0, 'the title model was not asked');
    assert.equal((await app.call('GET', `/v1/conversations/${id}`, { token: ALICE })).body.title, untitled);
    const titleRows = await app.adminQuery("SELECT key FROM usage_ledger WHERE conversation_id = $1 AND key LIKE 'title:%'", [id]);
    assert.deepEqual(titleRows, []);
  });
});
