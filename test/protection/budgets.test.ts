// Budgets that hold (issue 29), against real Temporal and PostgreSQL and the Gemini-wire test server reporting
// usage: concurrent turns of one user in several conversations stay within the daily limit plus at most the
// calls already reserved; deleting a conversation refunds nothing; the save pipeline's model calls (structure,
// image prompt, image) count; money budgets price a pro model's tokens above a flash model's; and with
// BUDGET_APPROVER_ROLE the spender cannot approve their own budget item.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { placeholderPng } from '../../src/agents/recipes/offline-save.ts';
import { budgetView } from '../../src/api/budget-view.ts';
import { freePort } from '../../stack/ports.ts';
import {
  type FakeGemini,
  type FakeReply,
  type RecordedRequest,
  endsWithToolResults,
  reply,
  startFakeGemini,
} from '../support/fake-gemini.ts';
import { OLD_FASHIONED, OLD_FASHIONED_JSON } from '../support/recipes.ts';
import { ALICE, BOB, CAROL, ERIN_BEER_STAFF, GUS_GREAT_LAKES, type TestApp, startTestApp } from '../support/test-app.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** usage metadata the fake reports for a call: `total` tokens, 90 % of them prompt */
const costs = (total: number) => ({ promptTokenCount: total * 0.9, candidatesTokenCount: total * 0.1, totalTokenCount: total });
/** an image model's answer that reports 100 tokens (a call reserves what it sends, so the turn's last step fits the budget) */
const image = (png: Uint8Array): FakeReply =>
  reply.chunks({
    candidates: [
      {
        content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: Buffer.from(png).toString('base64') } }] },
        index: 0,
        finishReason: 'STOP',
      },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 90, totalTokenCount: 100 },
  });

async function open(app: TestApp, token: string, agent: string): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent, title: 'budget ledger' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}
const say = (app: TestApp, id: string, text: string, token: string) =>
  app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text } });
const decide = (app: TestApp, id: string, body: Record<string, unknown>, token: string) =>
  app.call('POST', `/v1/conversations/${id}/decisions`, { token, body });
const chatTokens = async (app: TestApp, user: string) =>
  (await app.adminQuery('SELECT coalesce(sum(total_tokens), 0)::int AS n FROM model_usage WHERE user_id = $1', [user]))[0].n as number;

describe('token budgets against the ledger', () => {
  let fake: FakeGemini;
  let app: TestApp;
  let dataDir: string;
  /** how the fake answers, per test */
  let answer: (request: RecordedRequest) => FakeReply | undefined;
  const LIMIT = 2500;

  before(async () => {
    fake = await startFakeGemini({ apiKey: 'ledger-key' });
    fake.scriptFn((request) => answer(request));
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-ledger-'));
    app = await startTestApp({
      apiPort: await freePort(),
      env: {
        GEMINI_API_KEY: 'ledger-key',
        GEMINI_BASE_URL: fake.baseUrl,
        MODEL_TIMEOUT: '10s',
        MODEL_MAX_ATTEMPTS: '2',
        DATA_DIR: dataDir,
        TOKEN_BUDGET_PER_USER_PER_DAY: String(LIMIT),
        // a call holds as much as it will use, so the bound below is exact
        BUDGET_RESERVATION_TOKENS: '1000',
        APPROVAL_TIMEOUT: '60s',
      },
    });
  });
  after(async () => {
    await app?.stop();
    await fake?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  test('six concurrent turns of one user in six conversations stay within the daily limit plus the calls reserved', async (t) => {
    // Every call costs 1000 tokens and takes 400 ms; a turn is a lookup round and an answer (two calls).
    answer = (request) =>
      endsWithToolResults(request)
        ? reply.delay(400, reply.text('Found them.', { usage: costs(1000) }))
        : reply.delay(400, {
            kind: 'calls',
            calls: [{ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }],
            usage: costs(1000),
          });
    const ids = await Promise.all(Array.from({ length: 6 }, () => open(app, ALICE, 'support')));
    const turns = await Promise.all(ids.map((id) => say(app, id, 'Who is john@gmail.com?', ALICE)));
    for (const turn of turns) assert.equal(turn.status, 200, JSON.stringify(turn.body));

    const spent = await chatTokens(app, 'alice');
    t.diagnostic(`six turns of alice: ${fake.requests.length} model calls, ${spent} tokens spent against a daily limit of ${LIMIT}`);
    // Admitted only while spent + reserved < 2500, each call reserving its 1000: at most one call's worth over.
    assert.ok(spent <= LIMIT + 1000, `alice spent ${spent} tokens against a daily limit of ${LIMIT} (${fake.requests.length} model calls)`);
    assert.ok(fake.requests.length <= 3, `${fake.requests.length} model calls were made`);
    const parked = turns.filter((turn) => turn.body.pending?.[0]?.kind === 'budget');
    assert.ok(parked.length >= 3, 'the turns that found the budget held by others wait on a budget item');
    const ledger = await app.adminQuery(
      "SELECT count(*)::int AS n, sum(tokens)::int AS tokens, bool_and(settled) AS settled FROM usage_ledger WHERE user_id = 'alice'",
    );
    assert.deepEqual(ledger[0], { n: fake.requests.length, tokens: spent, settled: true });
    const view = await app.call('GET', `/v1/conversations/${ids[0]}`, { token: ALICE });
    assert.equal(view.body.budget.userDay.spent, spent);
    assert.equal(view.body.budget.warning.scope, 'user-day');
    assert.ok(view.body.budget.warning.percent >= 80);
  });

  test('deleting a conversation does not refund the daily budget', async () => {
    answer = () => reply.text('That was expensive.', { usage: costs(LIMIT) });
    const first = await open(app, CAROL, 'support');
    assert.equal((await say(app, first, 'spend it all', CAROL)).status, 200);
    assert.equal((await app.call('DELETE', `/v1/conversations/${first}`, { token: CAROL })).status, 204);

    const calls = fake.requests.length;
    const second = await open(app, CAROL, 'support');
    const turn = await say(app, second, 'and again', CAROL);
    assert.equal(turn.status, 200);
    assert.equal(fake.requests.length, calls, 'the model was not asked again');
    const [item] = turn.body.pending;
    assert.equal(item?.kind, 'budget', JSON.stringify(turn.body));
    assert.deepEqual(item.args, { scope: 'user-day', spent: LIMIT, limit: LIMIT });
    const view = await app.call('GET', `/v1/conversations/${second}`, { token: CAROL });
    assert.deepEqual(view.body.budget.userDay, { spent: LIMIT, limit: LIMIT });
    // the ledger keeps the deleted conversation's calls: counts and prices, no content
    const kept = await app.adminQuery('SELECT kind, tokens::int AS tokens FROM usage_ledger WHERE conversation_id = $1', [first]);
    assert.deepEqual(kept, [{ kind: 'chat', tokens: LIMIT }]);
  });

  test("the save pipeline's model calls (structure, image prompt, image) count against the budget", async () => {
    const png = placeholderPng('ledger image');
    answer = (request) => {
      if (request.model.includes('image')) return image(png);
      if (request.body.generationConfig?.responseJsonSchema) return reply.text(JSON.stringify(OLD_FASHIONED_JSON), { usage: costs(200) });
      if (!request.stream) return reply.text('A photograph of an Old Fashioned.', { usage: costs(100) });
      return endsWithToolResults(request)
        ? reply.text('Saved.', { usage: costs(100) })
        : { kind: 'calls', calls: [{ name: 'save_recipe', args: { raw_recipe_data: OLD_FASHIONED } }], usage: costs(100) };
    };
    const id = await open(app, GUS_GREAT_LAKES, 'recipes');
    const asked = await say(app, id, 'Save the Old Fashioned', GUS_GREAT_LAKES);
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    const [approval] = asked.body.pending;
    const saved = await decide(app, id, { pendingId: approval.id, decision: 'approve' }, GUS_GREAT_LAKES);
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.messages.at(-1).text, 'Saved.');

    // two chat steps (100 each), structuring (200), the image prompt (100) and the image (100)
    const view = await app.call('GET', `/v1/conversations/${id}`, { token: GUS_GREAT_LAKES });
    assert.equal(view.body.budget.userDay.spent, 600, JSON.stringify(view.body.budget));
    const rows = await app.adminQuery(
      "SELECT kind, task, tokens::int AS tokens, settled, images FROM usage_ledger WHERE user_id = 'gus' AND kind <> 'chat' ORDER BY created_at",
    );
    assert.deepEqual(rows, [
      { kind: 'task', task: 'recipe_structuring', tokens: 200, settled: true, images: null },
      { kind: 'task', task: 'recipe_image_prompt', tokens: 100, settled: true, images: null },
      { kind: 'image', task: 'recipe_image', tokens: 100, settled: true, images: 1 },
    ]);
    // the conversation's usage holds every call made for it, the pipeline's too (issue 43: it showed only the chat steps)
    assert.deepEqual(
      { totalTokens: view.body.usage.totalTokens, calls: view.body.usage.calls },
      { totalTokens: 600, calls: 5 },
      JSON.stringify(view.body.usage),
    );
    // and the image is priced per image: the conversation's cost includes it
    assert.equal(view.body.usage.cost.currency, 'USD');
    assert.ok(view.body.usage.cost.amount >= 0.134, `the conversation cost ${view.body.usage.cost.amount}`);
  });

  test('a pipeline call over the daily budget is not made and the save says why', async () => {
    // gus spent 600 of 2500 above; this save's chat step (100) and structuring (1900) pass, then the image prompt finds 2,600
    const png = placeholderPng('ledger image');
    answer = (request) => {
      if (request.model.includes('image')) return image(png);
      if (request.body.generationConfig?.responseJsonSchema) return reply.text(JSON.stringify(OLD_FASHIONED_JSON), { usage: costs(1900) });
      if (!request.stream) return reply.text('A photograph.', { usage: costs(100) });
      return endsWithToolResults(request)
        ? reply.text('Could not save it.', { usage: costs(100) })
        : { kind: 'calls', calls: [{ name: 'save_recipe', args: { raw_recipe_data: OLD_FASHIONED } }], usage: costs(100) };
    };
    const id = await open(app, GUS_GREAT_LAKES, 'recipes');
    const asked = await say(app, id, 'Save it again', GUS_GREAT_LAKES);
    const before = fake.requests.length;
    const decided = await decide(app, id, { pendingId: asked.body.pending[0].id, decision: 'approve' }, GUS_GREAT_LAKES);
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    // the recipe is kept without its image, the reason said; the turn's next step then waits on the budget
    const view = await app.call('GET', `/v1/conversations/${id}`, { token: GUS_GREAT_LAKES });
    const tool = view.body.messages.find((message: any) => message.role === 'tool');
    assert.match(JSON.stringify(tool.result), /You have used 2,600 tokens today, your daily budget is 2,500/);
    assert.ok(!fake.requests.slice(before).some((request) => request.model.includes('image')), 'no image was asked for');
  });

  test("beer's SQL generation and website summaries count against the budget", async () => {
    answer = (request) => {
      if (!request.stream) return reply.text('SELECT 1', { usage: costs(300) });
      return endsWithToolResults(request)
        ? reply.text('Here is what I found.', { usage: costs(100) })
        : { kind: 'calls', calls: [{ name: 'run_analytical_query_tool', args: { question: 'What did we buy most?' } }], usage: costs(100) };
    };
    const created = await app.call('POST', '/v1/conversations', {
      token: ERIN_BEER_STAFF,
      body: { agent: 'beer', client: 'CLT-CFY747', title: 'budget ledger' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const turn = await say(app, created.body.id, 'What did we buy most?', ERIN_BEER_STAFF);
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const rows = await app.adminQuery(
      "SELECT kind, task, tokens::int AS tokens, settled FROM usage_ledger WHERE user_id = 'erin' AND kind = 'task'",
    );
    assert.deepEqual(rows, [{ kind: 'task', task: 'sql_generation', tokens: 300, settled: true }]);
    const view = await app.call('GET', `/v1/conversations/${created.body.id}`, { token: ERIN_BEER_STAFF });
    assert.equal(view.body.budget.userDay.spent, 500, 'two chat steps and the SQL generation');

    // and a website summary's grounded call
    answer = (request) => {
      if (!request.stream) return { kind: 'grounded', text: 'A brewery in Escondido.', queries: ['stone brewing'], sources: [] };
      return endsWithToolResults(request)
        ? reply.text('Stone Brewing makes IPAs.', { usage: costs(100) })
        : {
            kind: 'calls',
            calls: [{ name: 'get_website_summary_tool', args: { brewery_name: 'Stone Brewing', url: 'https://www.stonebrew.com' } }],
            usage: costs(100),
          };
    };
    const summary = await say(app, created.body.id, 'Tell me about Stone Brewing', ERIN_BEER_STAFF);
    assert.equal(summary.status, 200, JSON.stringify(summary.body));
    const grounded = await app.adminQuery(
      "SELECT task, tokens::int AS tokens, settled FROM usage_ledger WHERE user_id = 'erin' AND task = 'web_summary'",
    );
    assert.equal(grounded.length, 1);
    assert.ok(grounded[0].settled && grounded[0].tokens > 0, JSON.stringify(grounded));
  });
});

describe('the budget view', () => {
  const config = {
    TOKEN_BUDGET_PER_CONVERSATION: undefined,
    TOKEN_BUDGET_PER_USER_PER_DAY: 1000,
    MONEY_BUDGET_PER_CONVERSATION: 1,
    MONEY_BUDGET_PER_USER_PER_DAY: undefined,
    BUDGET_CURRENCY: 'USD',
  };
  const totals = (dayTokens: number, conversationCost: number) => ({
    conversation: { tokens: 0, cost: conversationCost },
    userDay: { tokens: dayTokens, cost: conversationCost },
  });

  test('warns from 80 % of a limit, naming the budget nearest its limit', () => {
    assert.equal(budgetView(config, totals(799, 0.5), 0)?.warning, undefined);
    assert.deepEqual(budgetView(config, totals(800, 0.5), 0)?.warning, {
      scope: 'user-day',
      unit: 'tokens',
      percent: 80,
      text: 'You have used 80 % of your daily budget.',
    });
    assert.deepEqual(budgetView(config, totals(800, 0.9), 0), {
      userDay: { spent: 800, limit: 1000 },
      money: { currency: 'USD', conversation: { spent: 0.9, limit: 1 } },
      warning: { scope: 'conversation', unit: 'money', percent: 90, text: "You have used 90 % of this conversation's budget." },
    });
    // an approved budget item raises the conversation's money budget too
    assert.equal(budgetView(config, totals(0, 0.9), 1)?.warning, undefined);
  });
});

describe('money budgets', () => {
  let fake: FakeGemini;
  const apps: TestApp[] = [];
  // 900 prompt + 100 output tokens: flash 0.00052 USD, pro 0.002125 USD
  const LIMIT = 0.002;

  before(async () => {
    fake = await startFakeGemini({ apiKey: 'money-key' });
    fake.scriptFn(() => reply.text('Priced.', { usage: costs(1000) }));
  });
  after(async () => {
    for (const app of apps) await app.stop();
    await fake?.close();
  });

  const start = async (model: string, env: Record<string, string> = {}) => {
    const app = await startTestApp({
      env: {
        GEMINI_API_KEY: 'money-key',
        GEMINI_BASE_URL: fake.baseUrl,
        GEMINI_MODEL: model,
        MODEL_TIMEOUT: '10s',
        MONEY_BUDGET_PER_USER_PER_DAY: String(LIMIT),
        APPROVAL_TIMEOUT: '60s',
        ...env,
      },
    });
    apps.push(app);
    return app;
  };

  /** Turns until one parks on a budget item: the number of turns that were answered, and the item. */
  async function turnsUntilParked(app: TestApp, token: string) {
    const id = await open(app, token, 'support');
    for (let answered = 0; answered < 10; answered += 1) {
      const turn = await say(app, id, `turn ${answered + 1}`, token);
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      if (turn.body.pending?.[0]?.kind === 'budget') return { id, answered, item: turn.body.pending[0] };
    }
    assert.fail('no turn parked on the money budget');
  }

  test("a pro model's tokens spend a money budget four times faster than a flash model's", async () => {
    const flash = await start('gemini-2.5-flash');
    const cheap = await turnsUntilParked(flash, ALICE);
    assert.equal(cheap.answered, 4, 'flash: four calls of 0.00052 USD before 0.002 USD is reached');
    assert.deepEqual(cheap.item.args, { scope: 'user-day', spent: 0.00208, limit: LIMIT, unit: 'money', currency: 'USD' });
    assert.match(cheap.item.prompt, /You have spent USD 0\.0021 today, your daily budget is USD 0\.0020/);

    const pro = await start('gemini-2.5-pro');
    const dear = await turnsUntilParked(pro, ALICE);
    assert.equal(dear.answered, 1, 'pro: one call of 0.002125 USD spends it');
    const view = await pro.call('GET', `/v1/conversations/${dear.id}`, { token: ALICE });
    assert.deepEqual(view.body.usage.cost, { amount: 0.002125, currency: 'USD' });
    assert.deepEqual(view.body.budget.money, { currency: 'USD', userDay: { spent: 0.002125, limit: LIMIT } });
    assert.deepEqual(view.body.budget.warning, {
      scope: 'user-day',
      unit: 'money',
      percent: 106,
      text: 'You have used all of your daily budget.',
    });
  });

  test('with BUDGET_APPROVER_ROLE the spender cannot approve their budget item; an approver can, and sees nothing else', async () => {
    // a token budget too, so that the turn parks wherever budget items exist (the old main included)
    const app = await start('gemini-2.5-pro', { BUDGET_APPROVER_ROLE: 'beer-staff', TOKEN_BUDGET_PER_USER_PER_DAY: '1000' });
    const { id, item } = await turnsUntilParked(app, ALICE);

    const own = await decide(app, id, { pendingId: item.id, decision: 'approve' }, ALICE);
    assert.equal(own.status, 403, JSON.stringify(own.body));
    assert.match(own.body.error, /"beer-staff" role/);
    // a user without the role, and the approver for anything but the budget item, find no such conversation
    assert.equal((await decide(app, id, { pendingId: item.id, decision: 'approve' }, BOB)).status, 404);
    assert.equal((await decide(app, id, { pendingId: 'not-an-item', decision: 'approve' }, ERIN_BEER_STAFF)).status, 404);
    assert.equal((await app.call('GET', `/v1/conversations/${id}`, { token: ERIN_BEER_STAFF })).status, 404);

    const approved = await decide(app, id, { pendingId: item.id, decision: 'approve' }, ERIN_BEER_STAFF);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.deepEqual(approved.body, { pendingId: item.id, decision: 'approve', accepted: true });
    const deadline = Date.now() + 10_000;
    let view: any;
    do {
      await sleep(200);
      view = (await app.call('GET', `/v1/conversations/${id}`, { token: ALICE })).body;
    } while (view.status !== 'idle' && Date.now() < deadline);
    assert.equal(view.messages.at(-1).text, 'Priced.', 'the turn went on once someone else approved');
  });
});
