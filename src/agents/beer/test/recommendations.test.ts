// The beer finder through the API, with the real @google/genai client against fake-gemini and the real
// OpenBreweryDB client against a local OpenBreweryDB serving the fixture dataset: recommendations near
// the client and none from its history, yes with a name (by decision and by chat message), the cache on
// a second run, no, a (short) timeout with no grounding call, 409 and 422, API_ERROR, progress, metrics.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { simplifyBreweryName } from '../names.ts';
import {
  SAN_DIEGO_CLIENT,
  beerScript,
  groundingCalls,
  historyOf,
  progressEvents,
  scriptBeerGemini,
  untilIdle,
} from '../../../../test/support/beer.ts';
import {
  type FakeGemini,
  type RecordedRequest,
  endsWithToolResults,
  lastContent,
  reply,
  startFakeGemini,
} from '../../../../test/support/fake-gemini.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../../../../test/support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let fake: FakeGemini;
let api: FakeOpenBreweryDb;
let app: TestApp;
/** Beer staff may open a conversation for a named client. */
const call: TestApp['call'] = (method, path, options = {}) => app.call(method, path, { token: ERIN_BEER_STAFF, ...options });
const TIMEOUT_MS = 3_000;

before(async () => {
  fake = await startFakeGemini({ apiKey: 'beer-key' });
  api = await startFakeOpenBreweryDb();
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'beer-key',
      GEMINI_BASE_URL: fake.baseUrl,
      OPENBREWERYDB_BASE_URL: api.baseUrl,
      OPENBREWERYDB_TIMEOUT: '2s',
      BEER_CONFIRMATION_TIMEOUT: `${TIMEOUT_MS}ms`,
    },
  });
});
after(async () => {
  await app?.stop();
  await api?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  api.reset();
  scriptBeerGemini(fake);
});

async function conversation(client = SAN_DIEGO_CLIENT): Promise<string> {
  const created = await call('POST', '/v1/conversations', { body: { agent: 'beer', client } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}
const say = (id: string, text: string) => call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
const decide = (id: string, body: Record<string, unknown>) => call('POST', `/v1/conversations/${id}/decisions`, { body });
const toolMessage = (messages: any[]) => messages.find((m) => m.role === 'tool' && m.tool === 'recommend_breweries');

const lastSaid = (request: RecordedRequest) =>
  String(lastContent(request)?.parts?.find((part) => typeof part.text === 'string')?.text ?? '').trim();

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Asks for recommendations and returns the confirmation the turn parked on. */
async function recommend(id: string) {
  const turn = await say(id, 'Recommend some new breweries for my bar');
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.pending.length, 1, JSON.stringify(turn.body));
  return turn.body.pending[0];
}

describe('recommendations through the API', () => {
  let chosenName: string;

  test('new breweries near the client, none from its history; yes with a name by decision gets the summary', async () => {
    const id = await conversation();
    const item = await recommend(id);
    assert.equal(item.kind, 'confirmation');
    assert.equal(item.tool, 'recommend_breweries');
    assert.equal(item.prompt, 'Would you like details on any of them?');
    assert.deepEqual(item.decisions, ['yes', 'no']);
    assert.ok(item.options.length >= 3 && item.options.length <= 5, JSON.stringify(item.options));
    const history = await historyOf(app.adminUrl, SAN_DIEGO_CLIENT);
    for (const option of item.options) {
      assert.deepEqual(Object.keys(option).sort(), ['city', 'id', 'name', 'state']);
      assert.equal(option.state, 'California');
      assert.ok(!history.has(simplifyBreweryName(option.name)), `${option.name} is in the history`);
    }
    // the client's city first, with its top type ("large"), as the API lists them
    assert.deepEqual(api.requests[0]!.query, { by_city: 'san_diego', by_state: 'california', by_type: 'large', per_page: '50' });
    assert.ok(api.requests.length >= 1);

    chosenName = item.options[1].name;
    const decided = await decide(id, { pendingId: item.id, decision: 'yes', choice: chosenName });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    const tool = toolMessage(decided.body.messages);
    assert.equal(tool.result.status, 'success');
    assert.equal(tool.result.answer, 'yes');
    assert.equal(tool.result.chosen.brewery_name, chosenName);
    assert.equal(tool.result.summary.status, 'success');
    assert.equal(tool.result.summary.cache_status, 'CACHE_MISS');
    assert.match(tool.result.summary.summary, new RegExp(chosenName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.deepEqual(
      tool.cards.map((card: any) => card.type),
      ['breweries', 'brewery_summary'],
    );
    assert.equal(tool.cards[1].name, chosenName);
    assert.equal(decided.body.messages.at(-1).text, 'Those are the breweries I found for you.');
    assert.equal(groundingCalls(fake), 1);

    const steps = await progressEvents(app.adminUrl, id);
    const done = steps.filter((s) => s.state === 'done').map((s) => `${s.index}:${s.step}`);
    assert.deepEqual(done, ['1:profile', '2:search', '3:presentation', '4:confirmation', '5:summary']);
    assert.ok(steps.every((s) => s.of === 5 && s.workflowId === tool.result.workflow_id));
    assert.match(tool.result.workflow_id, /^brewery-recommendation-/);
  });

  test('a second run, answered "yes, <name>" by chat message, is served from the cache', async () => {
    const id = await conversation();
    const item = await recommend(id);
    assert.ok(item.options.some((o: any) => o.name === chosenName));
    const answered = await say(id, `yes, ${chosenName}`);
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    const tool = toolMessage(answered.body.messages);
    assert.equal(tool.result.summary.cache_status, 'CACHE_HIT');
    assert.equal(groundingCalls(fake), 0, 'no grounding call: the cache answered');

    const metrics = await call('GET', `/v1/conversations/${id}/metrics`);
    assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
    const [run] = metrics.body.workflows;
    assert.equal(run.workflowId, tool.result.workflow_id);
    assert.equal(run.status, 'completed');
    assert.equal(run.answer, 'yes');
    assert.deepEqual(
      run.log.map((e: any) => e.tool).filter((t: string, i: number, all: string[]) => all.indexOf(t) === i),
      ['get_client_profile', 'search_breweries', 'get_website_summary'],
    );
    assert.equal(run.tools.get_website_summary.cache.CACHE_HIT, 1);
    assert.equal(run.cacheHitRate, 1);
    assert.deepEqual(run.grounding, { made: 0, savedByConfirmation: item.options.length - 1, savedByCache: 1 });
    assert.equal(metrics.body.totals.workflows, 1);
    assert.equal(metrics.body.totals.grounding.savedByCache, 1);
    assert.ok(run.tools.search_breweries.calls >= 1);
  });

  test('a message that is no answer to the question is refused (409) and decides nothing; "no" then answers', async () => {
    const id = await conversation();
    const item = await recommend(id);
    const aside = await say(id, 'What time is it in San Diego?');
    assert.equal(aside.status, 409, JSON.stringify(aside.body));
    assert.match(aside.body.error, /"pending"/);
    const view = await call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(
      view.body.pending.map((p: any) => p.id),
      [item.id],
      'the question is still open',
    );
    const answered = await say(id, 'no');
    assert.equal(toolMessage(answered.body.messages).result.answer, 'no');
  });

  test('"no" ends it with no grounding call; a late answer is 409', async () => {
    const id = await conversation();
    const item = await recommend(id);
    const answered = await say(id, 'no thanks');
    const tool = toolMessage(answered.body.messages);
    assert.equal(tool.result.answer, 'no');
    assert.equal(tool.result.summary, undefined);
    assert.deepEqual(
      tool.cards.map((card: any) => card.type),
      ['breweries'],
    );
    assert.equal(groundingCalls(fake), 0);
    const late = await decide(id, { pendingId: item.id, decision: 'yes', choice: item.options[0].id });
    assert.equal(late.status, 409);
    const steps = await progressEvents(app.adminUrl, id);
    assert.ok(steps.some((s) => s.step === 'summary' && s.state === 'skipped'));
  });

  test('a choice that is not among the options is 422; the item stays open and takes an option id', async () => {
    const id = await conversation();
    const item = await recommend(id);
    const wrong = await decide(id, { pendingId: item.id, decision: 'yes', choice: 'Stone Brewing' });
    assert.equal(wrong.status, 422, JSON.stringify(wrong.body));
    const right = await decide(id, { pendingId: item.id, decision: 'yes', choice: item.options[0].id });
    assert.equal(right.status, 200);
    assert.equal(toolMessage(right.body.messages).result.chosen.brewery_id, item.options[0].id);
  });

  test('no answer: the short timeout ends it as "no" with no grounding call, and a late answer is 409', async () => {
    const id = await conversation();
    const started = Date.now();
    const item = await recommend(id);
    const view = await untilIdle(call, id, TIMEOUT_MS + 10_000);
    assert.ok(Date.now() - started >= TIMEOUT_MS);
    const tool = toolMessage(view.messages);
    assert.equal(tool.result.answer, 'timeout');
    assert.equal(groundingCalls(fake), 0);
    const late = await decide(id, { pendingId: item.id, decision: 'yes', choice: item.options[0].id });
    assert.equal(late.status, 409);
    const metrics = await call('GET', `/v1/conversations/${id}/metrics`);
    assert.equal(metrics.body.workflows[0].answer, 'timeout');
    assert.equal(metrics.body.workflows[0].grounding.savedByConfirmation, item.options.length);
  });

  test('OpenBreweryDB failing answers API_ERROR after its retries, as a result the turn reports', async () => {
    api.failAlways('500');
    const id = await conversation();
    const turn = await say(id, 'Recommend breweries');
    assert.equal(turn.status, 200);
    assert.equal(turn.body.pending.length, 0);
    const tool = toolMessage(turn.body.messages);
    assert.equal(tool.result.status, 'API_ERROR');
    assert.match(tool.result.error, /after 3 attempts/);
    assert.equal(api.requests.length, 3, 'three attempts, then the result');
    assert.equal(turn.body.messages.at(-1).role, 'assistant');
  });

  test("never the bar's own brand nor another location of a brewery it buys from", async () => {
    // CLT-CCW784 is Ballast Point Brewing Company, and buys from Stone Brewing and 10 Barrel Brewing Co
    const id = await conversation();
    const item = await recommend(id);
    const names = item.options.map((o: any) => o.name as string);
    assert.deepEqual(
      names.filter((name: string) => /ballast point|^stone brewing|^10 barrel/i.test(name)),
      [],
      names.join(', '),
    );
    await say(id, 'no');
  });

  test('a second recommendation in the conversation offers none of the first; asked "again", it may', async () => {
    const id = await conversation();
    const first = await recommend(id);
    await say(id, 'no');
    const second = await recommend(id);
    const firstIds = new Set(first.options.map((o: any) => o.id));
    assert.ok(second.options.length >= 3, JSON.stringify(second.options));
    assert.deepEqual(
      second.options.filter((o: any) => firstIds.has(o.id)).map((o: any) => o.name),
      [],
      'nothing offered twice',
    );
    await say(id, 'no');
    const turn = await say(id, 'Recommend the same breweries again');
    assert.equal(turn.body.pending.length, 1, JSON.stringify(turn.body));
    const again = turn.body.pending[0];
    assert.ok(
      again.options.some((o: any) => firstIds.has(o.id)),
      'asked for the same again, the first ones come back',
    );
    await say(id, 'no');
  });

  test('Stop during a recommendation: its question is never asked, the next "no" is a new turn, its progress says stopped', async () => {
    // the next turn's model answers slowly, so the stopped run reaches its question while that turn runs
    fake.scriptFn((request) =>
      request.stream && !endsWithToolResults(request) && /^no$/i.test(lastSaid(request))
        ? reply.delay(5_000, reply.text('Alright, no recommendations then.'))
        : beerScript(request),
    );
    api.failNext('hang'); // the first search waits out its 2 s timeout, then is asked again
    const id = await conversation();
    const turn = say(id, 'Recommend some new breweries for my bar');
    await until(async () => (await progressEvents(app.adminUrl, id)).some((s) => s.step === 'search' && s.state === 'started'));
    const stopped = await call('POST', `/v1/conversations/${id}/stop`);
    assert.ok(stopped.status < 300, JSON.stringify(stopped.body));
    assert.equal((await turn).body.pending.length, 0);

    const next = await say(id, 'no');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.deepEqual(next.body.pending, [], 'the stopped run asked nothing');
    assert.equal(next.body.messages.at(-1).text, 'Alright, no recommendations then.');
    assert.equal(toolMessage(next.body.messages), undefined, "the stopped run's result stays out of the conversation");

    await until(async () => (await progressEvents(app.adminUrl, id)).some((s) => s.state === 'stopped'));
    const steps = await progressEvents(app.adminUrl, id);
    assert.deepEqual(
      steps.filter((s) => s.state === 'stopped').map((s) => s.step),
      ['confirmation'],
    );
    assert.ok(!steps.some((s) => s.step === 'summary'), 'nothing after the stop');
    const view = await call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(view.body.pending, []);
    assert.ok(!view.body.messages.some((m: any) => m.role === 'tool' && m.tool === 'recommend_breweries' && m.result?.answer));
  });

  test('the metrics of a conversation that is not yours are 404', async () => {
    const id = await conversation();
    const other = await call('GET', `/v1/conversations/${id}/metrics`, { token: 'token-bob-plain-000000000000000' });
    assert.equal(other.status, 404);
    const empty = await call('GET', `/v1/conversations/${id}/metrics`);
    assert.deepEqual(empty.body.workflows, []);
    const document = await call('GET', '/openapi.json', { token: '' });
    assert.ok(document.body.paths['/v1/conversations/{id}/metrics'].get);
    assert.ok(document.body.components.schemas.ConversationMetrics);
  });
});
