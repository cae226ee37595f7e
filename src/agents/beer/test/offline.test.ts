// Without GEMINI_API_KEY the beer agent works end to end on its documented phrasings: "recommend
// breweries", "yes, <name>", "no", "find breweries in <city>, <ST>", "summary of <name> <url>". The
// offline summary says it is offline and is cached like any other.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { matchIntent } from '../../../model/offline-intents.ts';
import { SAN_DIEGO_CLIENT } from '../../../../test/support/beer.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../../../../test/support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';
import { builtInCatalog } from '../../catalog.ts';

let api: FakeOpenBreweryDb;
let app: TestApp;
/** Beer staff may open a conversation for a named client. */
const call: TestApp['call'] = (method, path, options = {}) => app.call(method, path, { token: ERIN_BEER_STAFF, ...options });

before(async () => {
  api = await startFakeOpenBreweryDb();
  app = await startTestApp({ env: { OPENBREWERYDB_BASE_URL: api.baseUrl, BEER_CONFIRMATION_TIMEOUT: '20s' } });
});
after(async () => {
  await app?.stop();
  await api?.close();
});

const tools = new Set(['recommend_breweries', 'search_breweries_tool', 'get_website_summary_tool', 'get_user_info']);

describe('offline phrasings', () => {
  test('map to the beer finder tools', () => {
    assert.deepEqual(matchIntent(builtInCatalog(), 'recommend breweries', tools), { name: 'recommend_breweries', args: {} });
    assert.deepEqual(matchIntent(builtInCatalog(), 'Can you recommend some new breweries?', tools), {
      name: 'recommend_breweries',
      args: {},
    });
    assert.deepEqual(matchIntent(builtInCatalog(), 'find breweries in San Diego, CA', tools), {
      name: 'search_breweries_tool',
      args: { city: 'San Diego', state: 'CA' },
    });
    assert.deepEqual(matchIntent(builtInCatalog(), 'find micro breweries in Bend, OR', tools), {
      name: 'search_breweries_tool',
      args: { city: 'Bend', state: 'OR', brewery_type: 'micro' },
    });
    assert.deepEqual(matchIntent(builtInCatalog(), 'find breweries in Oregon', tools), {
      name: 'search_breweries_tool',
      args: { state: 'Oregon' },
    });
    assert.deepEqual(matchIntent(builtInCatalog(), 'summary of Stone Brewing http://www.stonebrew.com', tools), {
      name: 'get_website_summary_tool',
      args: { brewery_name: 'Stone Brewing', url: 'http://www.stonebrew.com' },
    });
    assert.deepEqual(matchIntent(builtInCatalog(), 'find johndoe', tools), {
      name: 'get_user_info',
      args: { key: 'username', value: 'johndoe' },
    });
  });
});

describe('the beer agent offline, through the API', () => {
  const open = async () => {
    const created = await call('POST', '/v1/conversations', { body: { agent: 'beer', client: SAN_DIEGO_CLIENT } });
    assert.equal(created.status, 201);
    return created.body.id as string;
  };
  const say = async (id: string, text: string) => {
    const turn = await call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    return turn.body;
  };

  test('recommend, "yes, <name>": an offline summary, then the same from the cache; "no" ends it', async () => {
    const id = await open();
    const first = await say(id, 'recommend breweries');
    const item = first.pending[0];
    assert.equal(item.kind, 'confirmation');
    const name = item.options[0].name;
    const yes = await say(id, `yes, ${name}`);
    const reply = yes.messages.at(-1);
    assert.equal(reply.role, 'assistant');
    assert.match(reply.text, /^I found \d new breweries/);
    assert.match(reply.text, /Offline summary: this deployment runs without a model key, so no web search was made\./);
    assert.doesNotMatch(reply.text, /GEMINI_API_KEY/, 'no setting named to a person');
    const tool = yes.messages.find((m: any) => m.tool === 'recommend_breweries');
    assert.equal(tool.result.summary.cache_status, 'CACHE_MISS');

    // "again": the breweries offered before may come once more (without it, none of them would)
    const again = await say(id, 'recommend breweries again');
    const cached = await say(id, `yes, ${again.pending[0].options.find((o: any) => o.name === name).name}`);
    assert.equal(cached.messages.find((m: any) => m.tool === 'recommend_breweries').result.summary.cache_status, 'CACHE_HIT');
    assert.match(cached.messages.at(-1).text, /from the cache/);

    await say(id, 'recommend breweries again');
    const no = await say(id, 'no');
    assert.match(no.messages.at(-1).text, /No details requested/);
  });

  test('find breweries and a website summary by their phrasings', async () => {
    const id = await open();
    const found = await say(id, 'find breweries in Bend, OR');
    assert.match(found.messages.at(-1).text, /^Found \d+ new breweries:\n1\. /);
    const summary = await say(id, 'summary of Stone Brewing http://www.stonebrew.com');
    assert.match(summary.messages.at(-1).text, /Stone Brewing \(new\): Offline summary/);
    const invalid = await say(id, 'summary of Stone Brewing Unavailable');
    assert.match(invalid.messages.at(-1).text, /not a valid http\(s\) website address/);
  });
});
