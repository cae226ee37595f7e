// The bars a token may act for (GET /v1/bars, beer.bars_for in migration 022), on real PostgreSQL through
// the API: a bar's token sees its own bar only, beer staff every bar, anyone else 403, no token 401; the
// function reads past row-level security for brigade_app only, never for the role that runs a model's SQL.
// And an unknown bar is refused in a sentence a person can act on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
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
  // nothing here starts a turn: the API and its database are enough
  app = await startTestApp({ worker: false });
});
after(async () => {
  await app?.stop();
});

const GREAT_LAKES = { clientId: 'CLT-XLX836', name: 'Great Lakes Brewing Company', city: 'Cleveland', state: 'Ohio' };

describe('GET /v1/bars', () => {
  test("a bar's token: its own bar only, whatever the query string says", async () => {
    const own = await app.call('GET', '/v1/bars', { token: GUS_GREAT_LAKES });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(own.body, { bars: [GREAT_LAKES] });
    const asking = await app.call('GET', '/v1/bars?client=CLT-CFY747', { token: GUS_GREAT_LAKES });
    assert.deepEqual(asking.body, { bars: [GREAT_LAKES] });
  });

  test('beer staff without a client: every bar, by name, with nothing but the directory columns', async () => {
    const all = await app.call('GET', '/v1/bars', { token: ERIN_BEER_STAFF });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    const [customers] = await app.adminQuery<{ count: number }>('SELECT count(*)::int AS count FROM beer.customers');
    assert.equal(customers?.count, 20);
    assert.equal(all.body.bars.length, 20);
    const names = all.body.bars.map((bar: { name: string }) => bar.name);
    assert.deepEqual(
      names,
      [...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())),
    );
    assert.deepEqual(all.body.bars[0], { clientId: 'CLT-CFY747', name: '10 Barrel Brewing Co', city: 'Bend', state: 'Oregon' });
    assert.deepEqual(
      all.body.bars.find((bar: { clientId: string }) => bar.clientId === 'CLT-XLX836'),
      GREAT_LAKES,
    );
  });

  test("a token whose client is not a bar: an empty list, not another bar's", async () => {
    const none = await app.call('GET', '/v1/bars', { token: HAL_UNKNOWN_BAR });
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, { bars: [] });
  });

  test('no client and no beer-staff role: 403, as opening a conversation would be; no token or a bad one: 401', async () => {
    for (const token of [BOB, ALICE]) {
      const refused = await app.call('GET', '/v1/bars', { token });
      assert.equal(refused.status, 403);
      assert.match(refused.body.error, /only the "beer-staff" role may act for any bar/);
      assert.equal(refused.body.bars, undefined);
    }
    assert.equal((await app.call('GET', '/v1/bars', { token: '' })).status, 401);
    assert.equal((await app.call('GET', '/v1/bars', { token: 'token-nobody-at-all-000000000000' })).status, 401);
  });

  test('the OpenAPI document describes it', async () => {
    const document = await app.call('GET', '/openapi.json', { token: '' });
    const get = document.body.paths['/v1/bars'].get;
    assert.ok(get);
    assert.deepEqual(Object.keys(get.responses).sort(), ['200', '401', '403', '429', '503']);
    const list = document.body.components.schemas.BeerBarList;
    assert.ok(list, 'BeerBarList is a component');
    assert.deepEqual(Object.keys(list.properties), ['bars']);
  });
});

describe('beer.bars_for in the database', () => {
  const asRole = async <T>(role: string | null, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: app.databaseUrl, options: '-c role=brigade_app' });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query("SELECT set_config('brigade.user_id', 'erin', true)");
      if (role) await client.query(`SET LOCAL ROLE ${role}`);
      return await fn(client);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    }
  };

  test('brigade_app lists past row-level security, which still hides the table itself', async () => {
    await asRole(null, async (db) => {
      assert.equal((await db.query('SELECT * FROM beer.customers')).rows.length, 0, 'no client set: no row of the table');
      const all = await db.query('SELECT * FROM beer.bars_for(NULL)');
      assert.equal(all.rows.length, 20);
      assert.deepEqual(
        all.fields.map((field) => field.name),
        ['client_id', 'name', 'city', 'state'],
      );
      const one = await db.query('SELECT client_id FROM beer.bars_for($1)', ['CLT-XLX836']);
      assert.deepEqual(one.rows, [{ client_id: 'CLT-XLX836' }]);
    });
  });

  test('the role that runs SQL a model wrote may not call it', async () => {
    await asRole('brigade_beer_sql', async (db) => {
      await assert.rejects(db.query('SELECT * FROM beer.bars_for(NULL)'), (error: { code?: string }) => error.code === '42501');
    });
    const [grants] = await app.adminQuery<{ public: boolean; beer_sql: boolean }>(
      "SELECT has_function_privilege('public', 'beer.bars_for(text)', 'EXECUTE') AS public, has_function_privilege('brigade_beer_sql', 'beer.bars_for(text)', 'EXECUTE') AS beer_sql",
    );
    assert.deepEqual(grants, { public: false, beer_sql: false });
  });
});

describe('an unknown bar, in words', () => {
  const open = (token: string, body: Record<string, unknown>) =>
    app.call('POST', '/v1/conversations', { token, body: { agent: 'beer', ...body } });

  test('named in the body: 400, a sentence that says to pick a bar, and the field it is about', async () => {
    const refused = await open(ERIN_BEER_STAFF, { client: 'clt-nope00' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'No bar with the id "CLT-NOPE00". Pick a bar from the list.');
    assert.deepEqual(refused.body.fields, [{ field: 'client', message: refused.body.error }]);
  });

  test("the token's own: 400, a sentence that says who can fix it", async () => {
    const refused = await open(HAL_UNKNOWN_BAR, {});
    assert.equal(refused.status, 400);
    assert.equal(
      refused.body.error,
      'The bar this token acts for ("CLT-NOSUCH") does not exist. Ask whoever gave you the token to correct it.',
    );
  });
});
