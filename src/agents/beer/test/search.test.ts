// The OpenBreweryDB client and search_breweries_tool against a local OpenBreweryDB serving the fixture
// dataset: filters, history filtering by simplified name, statuses, retries, the timeout and API_ERROR.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { SearchBreweriesArgs, searchPlan } from '../definitions.ts';
import { brandKeys, historySet, inHistory, simplifyBreweryName, stateName } from '../names.ts';
import { listBreweries } from '../openbrewerydb.ts';
import { searchBreweries } from '../search.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../../../../test/support/fake-openbrewerydb.ts';

let api: FakeOpenBreweryDb;
const options = () => ({ baseUrl: api.baseUrl, timeoutMs: 500, maxAttempts: 3, backoffMs: 20 });
const search = (args: Record<string, unknown>) => searchBreweries(SearchBreweriesArgs.parse(args), options());

before(async () => {
  api = await startFakeOpenBreweryDb();
});
after(async () => api?.close());
beforeEach(() => api.reset());

describe('names', () => {
  test('suffixes are removed only at the end of a name', () => {
    assert.equal(simplifyBreweryName('Stone Brewing'), 'stone');
    assert.equal(simplifyBreweryName('Stone Brewing Co'), 'stone');
    assert.equal(simplifyBreweryName('Stone Brewing Company'), 'stone');
    assert.equal(simplifyBreweryName('Bay City Brewing Co.'), 'bay city');
    assert.equal(simplifyBreweryName('Ballast Point Brewery'), 'ballast point');
    assert.equal(simplifyBreweryName('Brewery Ommegang'), 'brewery ommegang');
    assert.equal(simplifyBreweryName('Brewing Company of Akron'), 'brewing company of akron');
    assert.equal(simplifyBreweryName('Stone Brewing Napa'), 'stone brewing napa');
    assert.equal(simplifyBreweryName('Brewery'), 'brewery');
  });

  test('state codes map to the names the API takes, DC included', () => {
    assert.equal(stateName('CA'), 'California');
    assert.equal(stateName('ny'), 'New York');
    assert.equal(stateName('DC'), 'District of Columbia');
    assert.equal(stateName('new_york'), 'New York');
    assert.equal(stateName('Oregon'), 'Oregon');
    assert.equal(stateName('XX'), undefined);
    const parsed = SearchBreweriesArgs.safeParse({ city: 'San Diego', state: 'XX' });
    assert.equal(parsed.success, false);
    assert.match(parsed.error!.issues[0]!.path.join('.'), /state/);
  });

  test('the search plan: the city with each top type in order, then the city, then the state', () => {
    assert.deepEqual(searchPlan({ city: 'Bend', state: 'Oregon', top_brewery_types: ['large', 'proprietor', 'bogus'] }), [
      { city: 'Bend', state: 'Oregon', brewery_type: 'large' },
      { city: 'Bend', state: 'Oregon', brewery_type: 'proprietor' },
      { city: 'Bend', state: 'Oregon' },
      { state: 'Oregon' },
    ]);
  });
});

describe('search_breweries_tool', () => {
  test("by city, state code and type, in the API order, with the tool's fields", async () => {
    const result = await search({ city: 'San Diego', state: 'CA', brewery_type: 'regional' });
    assert.equal(result.status, 'success');
    assert.deepEqual(api.requests[0]!.query, { by_city: 'san_diego', by_state: 'california', by_type: 'regional', per_page: '50' });
    const expected = api.breweries.filter(
      (b) => b.city.toLowerCase().includes('san diego') && b.state_province === 'California' && b.brewery_type === 'regional',
    );
    assert.deepEqual(
      result.breweries.map((b) => b.brewery_id),
      expected.map((b) => b.id),
    );
    const first = result.breweries[0]!;
    assert.deepEqual(Object.keys(first).sort(), [
      'address_1',
      'address_2',
      'address_3',
      'brewery_id',
      'brewery_name',
      'brewery_type',
      'city',
      'country',
      'latitude',
      'longitude',
      'phone',
      'postal_code',
      'state',
      'state_province',
      'street',
      'website_url',
    ]);
    assert.equal(first.address_2, 'Unavailable');
    assert.equal(typeof first.latitude, 'string');
    assert.equal(result.metadata.total_found, expected.length);
  });

  test('history filtering compares simplified names: "Stone Brewing" filters "Stone Brewing Co"', async () => {
    const all = await search({ city: 'Escondido', state: 'CA' });
    const names = all.breweries.map((b) => b.brewery_name);
    assert.ok(
      names.some((n) => /^Stone Brewing/.test(n)),
      names.join(', '),
    );
    const filtered = await search({ city: 'Escondido', state: 'CA', brewery_history: ['Stone Brewing'] });
    assert.equal(filtered.status, 'success');
    const kept = filtered.breweries.map((b) => b.brewery_name);
    for (const name of filtered.metadata.filtered_names) assert.ok(brandKeys(name).includes('stone'), name);
    assert.ok(filtered.metadata.filtered_out >= 1);
    assert.deepEqual(
      kept,
      names.filter((n) => !brandKeys(n).includes('stone')),
      'the API order is kept',
    );
  });

  test("another location of a brand in the history is filtered too: the bar's own brand, its suppliers' taprooms", async () => {
    const all = await search({ city: 'San Diego', state: 'CA', per_page: 200 });
    const names = all.breweries.map((b) => b.brewery_name);
    // the fixture's locations of two brands, named with a location after the brand
    assert.ok(names.includes('Ballast Point Brewing Company - Little Italy'), names.join(', '));
    assert.ok(names.includes('Stone Brewing World Bistro & Gardens- Liberty Station'), names.join(', '));
    const filtered = await search({
      city: 'San Diego',
      state: 'CA',
      per_page: 200,
      brewery_history: ['Ballast Point Brewing Company', 'Stone Brewing'],
    });
    const kept = filtered.breweries.map((b) => b.brewery_name);
    assert.deepEqual(
      kept.filter((n) => /ballast point|^stone brewing/i.test(n)),
      [],
      'no location of Ballast Point or Stone Brewing is offered',
    );
    assert.ok(filtered.metadata.filtered_names.includes('Ballast Point Brewing Co / Home Brew Mart'));
    // a brewery whose name only begins like a brand in the history is another brewery
    assert.equal(inHistory('Stone Cow Brewery', historySet(['Stone Brewing'])), false);
  });

  test('NO_BREWERIES and NO_NEW_BREWERIES', async () => {
    const none = await search({ city: 'Nowhereville', state: 'WY' });
    assert.equal(none.status, 'NO_BREWERIES');
    assert.equal(none.metadata.total_found, 0);
    const one = await search({ city: 'San Diego', state: 'CA', brewery_type: 'large' });
    const all = await search({
      city: 'San Diego',
      state: 'CA',
      brewery_type: 'large',
      brewery_history: one.breweries.map((b) => b.brewery_name),
    });
    assert.equal(all.status, 'NO_NEW_BREWERIES');
    assert.equal(all.metadata.filtered_out, one.breweries.length);
    assert.match(all.message!, /already in the client's history/);
  });

  test('5xx, 429 and a dropped connection are retried; then it answers', async () => {
    api.failNext('500', '429');
    const result = await search({ city: 'Bend', state: 'OR' });
    assert.equal(result.status, 'success');
    assert.equal(result.metadata.attempts, 3);
    api.reset();
    api.failNext('drop');
    const again = await listBreweries({ by_city: 'bend' }, options());
    assert.equal(again.attempts, 2);
  });

  test('a failing API ends in API_ERROR after its attempts, as a result', async () => {
    api.failAlways('503');
    const result = await search({ city: 'Bend', state: 'OR' });
    assert.equal(result.status, 'API_ERROR');
    assert.equal(result.metadata.attempts, 3);
    assert.equal(api.requests.length, 3);
    assert.match(result.error!, /HTTP 503.*after 3 attempts/);
    assert.deepEqual(result.breweries, []);
  });

  test('a network failure is said in words for people, its code kept in the metadata for operators', async () => {
    api.failAlways('drop');
    const dropped = await search({ city: 'Bend', state: 'OR' });
    assert.equal(dropped.status, 'API_ERROR');
    assert.match(dropped.error!, /^OpenBreweryDB could not be reached: the connection was closed before an answer \(after 3 attempts\)$/);
    assert.equal(dropped.metadata.failure, 'UND_ERR_SOCKET');

    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const refused = await searchBreweries(SearchBreweriesArgs.parse({ state: 'OR' }), {
      ...options(),
      baseUrl: `http://127.0.0.1:${closed}`,
      maxAttempts: 1,
    });
    assert.equal(refused.error, 'OpenBreweryDB could not be reached: the connection was refused (after 1 attempt)');
    assert.equal(refused.metadata.failure, 'ECONNREFUSED');
    assert.doesNotMatch(`${dropped.error} ${refused.error}`, /[A-Z]{4,}_|E[A-Z]{5,}/, 'no error codes in the sentence');
  });

  test('a request that hangs times out and counts as an attempt', async () => {
    api.failAlways('hang');
    const started = Date.now();
    const result = await searchBreweries(SearchBreweriesArgs.parse({ state: 'OR' }), { ...options(), timeoutMs: 150, maxAttempts: 2 });
    assert.equal(result.status, 'API_ERROR');
    assert.match(result.error!, /did not answer within 150 ms/);
    assert.equal(api.requests.length, 2);
    assert.ok(Date.now() - started < 2_000);
  });

  test('a 404 is final: no retries', async () => {
    const result = await searchBreweries(SearchBreweriesArgs.parse({ state: 'OR' }), {
      ...options(),
      baseUrl: api.baseUrl.replace('/v1', '/v0'),
    });
    assert.equal(result.status, 'API_ERROR');
    assert.equal(api.requests.length, 1);
  });
});
