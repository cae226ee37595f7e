// A beer conversation through the API with the offline model (no GEMINI_API_KEY): who the client is
// (the token's; beer-staff names one; else 403; an unknown client is 400), and the documented offline
// phrasings end to end through both data tools, including the one that asks for another client.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadOrCreateDevToken } from '../../../../stack/dev-token.ts';
import {
  ALICE,
  BOB,
  ERIN_BEER_STAFF,
  GUS_GREAT_LAKES,
  HAL_UNKNOWN_BAR,
  type TestApp,
  startTestApp,
} from '../../../../test/support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

const open = (token: string, body: Record<string, unknown>) =>
  app.call('POST', '/v1/conversations', { token, body: { agent: 'beer', ...body } });

describe('who a beer conversation acts for', () => {
  test("a bar's token opens one for its own client, with no role", async () => {
    const created = await open(GUS_GREAT_LAKES, {});
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const same = await open(GUS_GREAT_LAKES, { client: 'CLT-XLX836' });
    assert.equal(same.status, 201);
  });

  test("a bar's token naming another client: 403", async () => {
    const other = await open(GUS_GREAT_LAKES, { client: 'CLT-CFY747' });
    assert.equal(other.status, 403);
    assert.match(other.body.error, /acts for client "CLT-XLX836" only/);
  });

  test('beer-staff without a client of its own names one in the body', async () => {
    const created = await open(ERIN_BEER_STAFF, { client: 'CLT-CFY747' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  });

  test('no client on the token and no beer-staff role: 403, even naming a client; beer-staff naming none: 403', async () => {
    for (const token of [BOB, ALICE]) {
      const refused = await open(token, { client: 'CLT-CFY747' });
      assert.equal(refused.status, 403);
      assert.match(refused.body.error, /only the "beer-staff" role may name a client/);
    }
    const none = await open(ERIN_BEER_STAFF, {});
    assert.equal(none.status, 403);
    assert.match(none.body.error, /must name the client/);
  });

  test('a client that is not in beer.customers: 400 naming it, from the token or from the body', async () => {
    const fromToken = await open(HAL_UNKNOWN_BAR, {});
    assert.equal(fromToken.status, 400);
    assert.match(fromToken.body.error, /^The bar this token acts for \("CLT-NOSUCH"\) does not exist\./);
    const fromBody = await open(ERIN_BEER_STAFF, { client: 'CLT-NOPE99' });
    assert.equal(fromBody.status, 400);
    assert.equal(fromBody.body.error, 'No bar with the id "CLT-NOPE99". Pick a bar from the list.');
  });

  test('other agents are not affected by the beer rule', async () => {
    const support = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'support' } });
    assert.equal(support.status, 201);
  });

  test('the dev token is beer-staff (and support, and an operator of the codec server)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'brigade-dev-token-'));
    try {
      const { token, tokens } = await loadOrCreateDevToken(dir);
      assert.deepEqual(tokens[token]!.roles.sort(), ['beer-staff', 'operator', 'support']);
      assert.equal(tokens[token]!.client, undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the offline beer agent, end to end', () => {
  const say = async (token: string, id: string, text: string) => {
    const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const tool = turn.body.messages.find((message: any) => message.role === 'tool');
    return { tool, reply: turn.body.messages.at(-1).text as string };
  };

  test("a bar's own profile and purchases, aggregates, and a refusal for another bar", async () => {
    const created = await open(GUS_GREAT_LAKES, {});
    const id = created.body.id;

    const profile = await say(GUS_GREAT_LAKES, id, 'my profile');
    assert.equal(profile.tool.tool, 'get_client_profile_tool');
    assert.equal(profile.tool.result.client_id, 'CLT-XLX836');
    assert.equal(profile.tool.result.client_location_city_state, 'Cleveland, Ohio');
    assert.ok(Array.isArray(profile.tool.result.brewery_history));
    assert.equal(profile.tool.result.search_metadata.method, 'client_id');

    const quilmes = await say(GUS_GREAT_LAKES, id, 'How many Quilmes did I buy?');
    assert.equal(quilmes.tool.tool, 'run_analytical_query_tool');
    assert.equal(quilmes.tool.result.status, 'success');
    assert.deepEqual(quilmes.tool.result.rows, [{ beer: 'Quilmes', cases: 264, purchases: 18 }]);
    assert.match(quilmes.reply, /^(?!\[offline model\]).*cases 264/);

    const top = await say(GUS_GREAT_LAKES, id, 'my top breweries');
    assert.equal(top.tool.result.count, 5);
    assert.equal(top.tool.result.rows[0].brewery, 'Founders Brewing Co');

    const california = await say(GUS_GREAT_LAKES, id, 'best-selling beer in California');
    assert.deepEqual(california.tool.result.rows, [{ state: 'California', beer: 'Jupiler', total_quantity: 868, clients: 5 }]);

    // Ohio has one client (this bar): an aggregate of it would be its own purchases, so the view leaves it out
    const ohio = await say(GUS_GREAT_LAKES, id, 'best-selling beer in Ohio');
    assert.deepEqual(ohio.tool.result.rows, []);
    assert.match(ohio.reply, /at least 3 clients/);
    // one level up, the region answers; this bar's own purchases are in no aggregate, so the Midwest (its
    // region, three other bars) has no beer that three other bars bought
    const west = await say(GUS_GREAT_LAKES, id, 'best-selling beer in the West');
    assert.deepEqual(west.tool.result.rows, [{ region: 'West', beer: 'Jupiler', total_quantity: 868, clients: 5 }]);
    const midwest = await say(GUS_GREAT_LAKES, id, 'best-selling beer in the Midwest');
    assert.deepEqual(midwest.tool.result.rows, []);

    const other = await say(GUS_GREAT_LAKES, id, 'what did CLT-CFY747 buy?');
    assert.equal(other.tool.result.status, 'refused');
    assert.match(other.tool.result.sql, /client_id = 'CLT-CFY747'/);
    assert.match(other.reply, /That did not work: Query refused: it asks for another client's data \(CLT-CFY747\)/);
  });

  test('beer-staff acting for a named client sees that client', async () => {
    const created = await open(ERIN_BEER_STAFF, { client: 'CLT-CFY747' });
    const profile = await say(ERIN_BEER_STAFF, created.body.id, 'who am I');
    assert.equal(profile.tool.result.client_id, 'CLT-CFY747');
    assert.equal(profile.tool.result.client_name, '10 Barrel Brewing Co');
  });
});
