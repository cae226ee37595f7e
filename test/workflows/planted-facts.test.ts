// Issue 44, item 6 (its CI half): facts a person planted early in a long conversation still reach the model at
// its end, in the summary or verbatim, while what the model is sent stays within the context budget. One
// support conversation of 120 turns through the API (a lookup of a sizeable result every fifth turn) with a
// small MODEL_CONTEXT_TOKENS, against the scripted Gemini-wire server and the real @google/genai client, on the
// Temporal dev server and PostgreSQL. The scripted model summarizes faithfully: asked for anything but the
// conversation's next step (a summary), it answers with every planted fact the request holds, so a fact is lost
// only when the runtime leaves it out of what it sends.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { estimateTokens } from '../../src/model/token-estimate.ts';
import {
  endsWithToolResults,
  type FakeGemini,
  type FakeReply,
  lastContent,
  type RecordedRequest,
  startFakeGemini,
} from '../support/fake-gemini.ts';
import { waitUntilIdle } from '../support/scenarios.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

/** what the model may be sent; the conversation holds about six times as much by its last turn */
const BUDGET = 6000;
/**
 * The wire's JSON (Gemini contents) and the runtime's estimate of what it sends (its own messages' JSON) are not
 * the same bytes: a request within a quarter over the budget is taken as kept. Unbounded, the last request is
 * several times the budget.
 */
const SLACK = 1.25;
const TURNS = 120;
const LOOKUP_EVERY = 5;
const CUSTOMER = '7000002';
const ORDERS = 30;

/** the facts, the turn each is told at, and the sentence that tells it */
const FACTS = [
  { turn: 10, marker: 'KESTREL-7391', said: 'Please remember for later: the gate code of the Riverside depot is KESTREL-7391.' },
  { turn: 40, marker: 'OSPREY-2864', said: 'Keep this in mind: the courier contract number is OSPREY-2864.' },
  { turn: 80, marker: 'HERON-5107', said: 'Note for later: the customer’s preferred delivery slot code is HERON-5107.' },
  { turn: 110, marker: 'PLOVER-9423', said: 'One more to remember: the refund ticket is PLOVER-9423.' },
] as const;

const lookupText = (turn: number) => `Turn ${turn}: please list every order for customer ${CUSTOMER} again.`;
const chatText = (turn: number) =>
  `Turn ${turn}: thanks. The customer would also like to know whether an evening delivery is possible next week.`;
const textOf = (turn: number) =>
  FACTS.find((fact) => fact.turn === turn)?.said ?? (turn % LOOKUP_EVERY === 0 ? lookupText(turn) : chatText(turn));
const ANSWER = 'Understood. I have noted that on the account; evening deliveries depend on the courier in the area.';

let fake: FakeGemini;
let app: TestApp;

before(async () => {
  fake = await startFakeGemini();
  // summary requests reach the script: this test is about them
  fake.scriptSummaries = true;
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'planted-facts-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_CONTEXT_TOKENS: String(BUDGET),
      // one person in a hurry: 120 turns in well under a minute
      USER_TURNS_PER_MINUTE: '0',
      USER_REQUESTS_PER_MINUTE: '0',
      USER_CONCURRENT_REQUESTS: '0',
    },
  });
  // a customer with many orders, so a lookup's result is sizeable (about 3 KB)
  await app.adminQuery(
    "INSERT INTO customers (id, name, email, phone, username) VALUES ($1, 'Planted Facts', 'planted@facts.test', '555-000-0002', 'plantedfacts')",
    [CUSTOMER],
  );
  for (let i = 0; i < ORDERS; i += 1) {
    await app.adminQuery(
      "INSERT INTO orders (id, customer_id, product, quantity, price, status) VALUES ($1, $2, 'Laptop Sleeve', 1, 24.99, 'Shipped')",
      [String(71_000 + i), CUSTOMER],
    );
  }
});
after(async () => {
  await app?.stop();
  await fake?.close();
});

test('facts planted at turns 10 to 110 of a 120-turn conversation reach the model at its last turn, within the context budget', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;

  let turn = 0;
  /** requests that create an explicit context cache: a step that names one is sent its contents too */
  const caches: RecordedRequest[] = [];
  /** the conversation's steps (not summaries), each with its turn and size */
  const steps: { turn: number; request: RecordedRequest; tokens: number }[] = [];
  fake.scriptFn((request) => {
    const body = JSON.stringify(request.body);
    const said = (lastContent(request)?.parts ?? []).map((part) => part.text ?? '').join('');
    const declaresTools = (request.body.tools ?? []).some((tool) =>
      tool.functionDeclarations?.some((d) => d.name === 'get_customer_orders'),
    );
    const lookup = turn % LOOKUP_EVERY === 0 && !FACTS.some((fact) => fact.turn === turn);
    const afterTool = lookup && endsWithToolResults(request);
    // The turn's own step ends with what the person just said, or with its lookup's result; anything else is a
    // call made for the conversation (a summary), answered with every planted fact it was given.
    if (!declaresTools || !(said === textOf(turn) || afterTool)) {
      const kept = FACTS.filter((fact) => body.includes(fact.marker)).map((fact) => fact.said);
      return { kind: 'text', text: `Summary of the conversation so far. Facts to keep: ${kept.join(' ') || 'none'}` } satisfies FakeReply;
    }
    steps.push({ turn, request, tokens: estimateTokens(body) });
    if (afterTool) return { kind: 'text', text: 'Here are all of their orders; most have shipped.' };
    if (lookup) return { kind: 'calls', calls: [{ name: 'get_customer_orders', args: { customer_id: CUSTOMER } }] };
    return { kind: 'text', text: ANSWER };
  });

  for (turn = 1; turn <= TURNS; turn += 1) {
    // the last turn asks once the conversation is idle: whatever is done after an answer is done
    if (turn === TURNS) await waitUntilIdle(app, id, 30_000);
    const sent = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: textOf(turn) } });
    assert.equal(sent.status, 200, `turn ${turn}: ${JSON.stringify(sent.body).slice(0, 500)}`);
    caches.push(...fake.requests.filter((request) => request.path.includes('cachedContents')));
    fake.requests.length = 0;
  }

  // every turn was the model's, in full
  assert.equal(new Set(steps.map((step) => step.turn)).size, TURNS);
  const rows = await app.adminQuery<{ count: string }>('SELECT count(*) AS count FROM messages WHERE conversation_id = $1', [id]);
  const lookups = Array.from({ length: TURNS }, (_, i) => i + 1).filter(
    (n) => n % LOOKUP_EVERY === 0 && !FACTS.some((f) => f.turn === n),
  ).length;
  assert.equal(Number(rows[0]!.count), TURNS * 2 + lookups * 2, 'the transcript keeps every message');

  const last = steps.filter((step) => step.turn === TURNS).at(-1)!;
  const lastBody = JSON.stringify(last.request.body);
  const cached = last.request.body.cachedContent ? caches.map((request) => JSON.stringify(request.body)).join('\n') : '';
  const missing = FACTS.filter((fact) => !`${lastBody}${cached}`.includes(fact.marker)).map((fact) => `${fact.marker} (turn ${fact.turn})`);
  assert.deepEqual(missing, [], 'each planted fact reaches the model at the last turn, in the summary or verbatim');

  const largest = steps.reduce((a, b) => (b.tokens > a.tokens ? b : a));
  assert.ok(
    largest.tokens <= BUDGET * SLACK,
    `what the model is sent stays within MODEL_CONTEXT_TOKENS=${BUDGET}: the largest request was about ${largest.tokens} tokens ` +
      `(${estimateTokens(lastBody)} at the last turn), at turn ${largest.turn}`,
  );
});
