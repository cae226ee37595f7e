// The beer agent's data (db/migrations/007_beer.sql) and get_client_profile_tool, on real PostgreSQL as
// brigade_app, the way the runtime runs a tool: the fixture's clients, purchases that are the same in
// every database, row-level security keyed on the conversation's client, aggregate views without
// client identity or small groups, and the profile's lookups and result shape.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../../config.ts';
import { setBeerClient } from '../clients-db.ts';
import { migrate } from '../../../db/migrate.ts';
import { asUser, createPool } from '../../../db/pool.ts';
import { createOfflineTaskModel } from '../../../model/offline-tasks.ts';
import { clientProfileSpec as profileSpec } from '../tools.ts';
import { getClientProfile, getClientProfileTool, loadClientProfile } from '../profile.ts';
import type { ToolContext } from '../../../activities/tool-context.ts';
import { SEAL_IDENTITY } from '../../../sql/execute.ts';
import { freshDatabase } from '../../../../test/support/harness.ts';

interface FixtureCustomer {
  client_id: string;
  client_name: string;
  client_city: string;
  client_state: string;
  postal_code: string;
  top3_brewery_types: string[];
  top5_beers_recently: string[];
  top3_breweries_recently: string[];
}
const fixture: FixtureCustomer[] = JSON.parse(
  await readFile(new URL('../../../../test/fixtures/beerforyou-customers.json', import.meta.url), 'utf8'),
).customers;
const byId = new Map(fixture.map((customer) => [customer.client_id, customer]));

const GREAT_LAKES = 'CLT-XLX836'; // Cleveland, Ohio: the only client in its state
const DESCHUTES = 'CLT-CIR922'; // Bend, Oregon, postal code 97702 like 10 Barrel

// md5 of every purchase, in order: the migration's generator must give these rows in every database.
const PURCHASES_DIGEST = '96bce3df12693fddef4d0b2e63214e2c';
const DIGEST_SQL = `SELECT count(*)::int AS n, md5(string_agg(concat_ws('|', purchase_id, client_id, purchased_on, beer, brewery, quantity), ',' ORDER BY purchase_id)) AS digest FROM beer.purchases`;

let databases: Awaited<ReturnType<typeof freshDatabase>>[] = [];
let pool: pg.Pool;
let admin: pg.Pool;

before(async () => {
  databases = [await freshDatabase()];
  pool = createPool(databases[0]!.url);
  admin = createPool(databases[0]!.adminUrl, { role: null });
});
after(async () => {
  await pool?.end();
  await admin?.end();
  for (const database of databases) await database.drop();
});

const asClient = <T>(client: string | undefined, fn: (db: pg.PoolClient) => Promise<T>) =>
  asUser(pool, 'beer-test', async (db) => {
    if (client) await setBeerClient(db, client);
    return fn(db);
  });

describe('the migration', () => {
  test('beer.customers holds the fixture, list fields as lists', async () => {
    const { rows } = await admin.query('SELECT * FROM beer.customers ORDER BY client_id');
    assert.equal(rows.length, fixture.length);
    assert.deepEqual(
      rows,
      [...fixture].sort((a, b) => a.client_id.localeCompare(b.client_id)),
    );
    assert.ok(rows.every((row) => Array.isArray(row.top5_beers_recently)));
  });

  test('purchases are the same rows in every database: a fixed digest, and a database migrated from nothing agrees', async () => {
    const first = await admin.query(DIGEST_SQL);
    assert.deepEqual(first.rows[0], { n: 960, digest: PURCHASES_DIGEST });

    // A second database migrated from scratch (not a copy of the template): the generator runs again.
    const server = new URL(databases[0]!.adminUrl);
    const name = `beer_again_${process.pid}`;
    const adminClient = new pg.Client({ connectionString: databases[0]!.adminUrl });
    await adminClient.connect();
    await adminClient.query(`CREATE DATABASE ${name}`);
    await adminClient.end();
    server.pathname = `/${name}`;
    try {
      await migrate(server.toString());
      const other = new pg.Client({ connectionString: server.toString() });
      await other.connect();
      const again = await other.query(DIGEST_SQL);
      await other.end();
      assert.deepEqual(again.rows[0], first.rows[0]);
    } finally {
      const dropper = new pg.Client({ connectionString: databases[0]!.adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    }
  });

  test("purchases come from the client's own lists: beers from its top 5, recent ones from its top 3 breweries, all in 2025", async () => {
    const { rows } = await admin.query(
      'SELECT client_id, beer, brewery, purchased_on::text AS day, quantity, right(purchase_id, 2)::int AS n FROM beer.purchases',
    );
    for (const row of rows) {
      const customer = byId.get(row.client_id)!;
      assert.ok(customer.top5_beers_recently.includes(row.beer), `${row.beer} is one of ${row.client_id}'s beers`);
      assert.notEqual(row.brewery, customer.client_name, 'a bar does not buy from itself');
      assert.ok(row.day >= '2025-01-01' && row.day <= '2025-12-31');
      assert.ok(row.quantity >= 1 && row.quantity <= 24);
      if (row.n <= 18) {
        assert.ok(customer.top3_breweries_recently.includes(row.brewery));
        assert.ok(row.day >= '2025-10-02', 'recent purchases are in the last 90 days');
      }
    }
  });

  test('as brigade_app, no client set means no rows; a client set means its rows only', async () => {
    const none = await asClient(undefined, async (db) => (await db.query('SELECT count(*)::int AS n FROM beer.purchases')).rows[0].n);
    assert.equal(none, 0);
    const own = await asClient(GREAT_LAKES, async (db) => (await db.query('SELECT DISTINCT client_id FROM beer.purchases')).rows);
    assert.deepEqual(own, [{ client_id: GREAT_LAKES }]);
    const customers = await asClient(GREAT_LAKES, async (db) => (await db.query('SELECT client_id FROM beer.customers')).rows);
    assert.deepEqual(customers, [{ client_id: GREAT_LAKES }]);
  });

  test('aggregate views hold no client identity and no group of fewer than 3 clients, and count everyone but the asking bar', async () => {
    const views = ['sales_by_beer', 'sales_by_brewery', 'sales_by_state', 'sales_by_state_beer', 'sales_by_region_beer', 'sales_by_month'];
    const { rows: columns } = await admin.query(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'beer' AND table_name = ANY($1)",
      [views],
    );
    const names = new Set(columns.map((column) => column.column_name));
    for (const forbidden of ['client_id', 'client_name', 'client_city', 'postal_code', 'purchase_id'])
      assert.ok(!names.has(forbidden), forbidden);

    // The views answer for a sealed identity only (migrations 016 and 017): without one there is no asking
    // bar to leave out, so they are empty.
    assert.deepEqual(await asClient(GREAT_LAKES, async (db) => (await db.query('SELECT * FROM beer.sales_by_beer')).rows), []);
    const asSealedClient = <T>(fn: (db: pg.PoolClient) => Promise<T>) =>
      asClient(GREAT_LAKES, async (db) => {
        await db.query(SEAL_IDENTITY);
        return fn(db);
      });
    for (const view of views) {
      // read as a client: the view aggregates across all the other clients
      const rows = await asSealedClient(async (db) => (await db.query(`SELECT * FROM beer.${view}`)).rows);
      assert.ok(rows.length > 0, `${view} has rows`);
      assert.ok(
        rows.every((row) => row.clients >= 3),
        `${view}: every group has 3+ clients`,
      );
    }
    const total = await asSealedClient(
      async (db) => (await db.query('SELECT sum(total_quantity)::int AS q FROM beer.sales_by_month')).rows[0].q,
    );
    const others = (await admin.query('SELECT sum(quantity)::int AS q FROM beer.purchases WHERE client_id <> $1', [GREAT_LAKES])).rows[0].q;
    assert.ok(total > 0 && total <= others, 'the months add up to the published purchases of the other bars');

    const states = await asSealedClient(async (db) => (await db.query('SELECT state FROM beer.sales_by_state ORDER BY state')).rows);
    assert.deepEqual(states, [{ state: 'California' }], 'Ohio (1 client), Oregon and Colorado (2) are left out');
  });
});

describe('get_client_profile_tool', () => {
  let calls = 0;
  const contextFor = (db: pg.ClientBase, client: string | undefined): ToolContext => ({
    db,
    userId: 'beer-test',
    conversationId: 'conversation-beer-test',
    callId: `call-${++calls}`,
    ...(client ? { client } : {}),
    services: { config: loadConfig({}), taskModel: createOfflineTaskModel(), pool },
  });
  const callTool = (client: string | undefined, args: unknown) =>
    asUser(pool, 'beer-test', (db) => getClientProfileTool(profileSpec.args.parse(args), contextFor(db, client))) as Promise<any>;

  test("by client_id: the tool's shape, lists as lists, the brewery history, search_metadata with the SQL and its time", async () => {
    const profile = await callTool(GREAT_LAKES, { client_id: GREAT_LAKES });
    const fixtureRow = byId.get(GREAT_LAKES)!;
    assert.equal(profile.client_id, GREAT_LAKES);
    assert.equal(profile.client_name, 'Great Lakes Brewing Company');
    assert.equal(profile.client_location_city_state, 'Cleveland, Ohio');
    assert.equal(profile.client_city, 'Cleveland');
    assert.equal(profile.client_state, 'Ohio');
    assert.equal(profile.postal_code, '44113');
    assert.deepEqual(profile.top3_brewery_types, fixtureRow.top3_brewery_types);
    assert.deepEqual(profile.top5_beers_recently, fixtureRow.top5_beers_recently);
    assert.deepEqual(profile.top3_breweries_recently, fixtureRow.top3_breweries_recently);
    assert.ok(Array.isArray(profile.brewery_history));
    const bought = (await admin.query('SELECT DISTINCT brewery FROM beer.purchases WHERE client_id = $1', [GREAT_LAKES])).rows.map(
      (r) => r.brewery,
    );
    assert.deepEqual([...profile.brewery_history].sort(), bought.sort());
    for (const recent of fixtureRow.top3_breweries_recently) assert.ok(profile.brewery_history.includes(recent));
    assert.ok(profile.brewery_history.length > 3, 'the history is longer than the recent top 3');
    assert.equal(profile.search_metadata.method, 'client_id');
    assert.match(profile.search_metadata.sql, /FROM beer\.customers c WHERE c\.client_id = \$1/);
    assert.equal(typeof profile.search_metadata.execution_time_ms, 'number');
  });

  test("client_id left out, or spelled in lower case, is the conversation's client", async () => {
    assert.equal((await callTool(GREAT_LAKES, {})).client_id, GREAT_LAKES);
    const forActivity = (await loadClientProfile(pool, 'beer-test', GREAT_LAKES)) as any;
    assert.equal(forActivity.client_id, GREAT_LAKES);
    assert.equal(forActivity.search_metadata.method, 'client_id');
    assert.equal((await callTool(GREAT_LAKES, { client_id: ' clt-xlx836 ' })).client_id, GREAT_LAKES);
  });

  test('another client_id is refused with a clear message and never looked up', async () => {
    const refused = await callTool(GREAT_LAKES, { client_id: DESCHUTES });
    assert.equal(refused.status, 'refused');
    assert.match(refused.error, /acts for client CLT-XLX836 only; the profile of another client \(CLT-CIR922\) is not available/);
    assert.equal(refused.client_name, undefined);
    assert.equal(refused.search_metadata, undefined);
  });

  test("falls back to postal_code with client_name (case-insensitive), as the conversation's client", async () => {
    const found = (await asUser(pool, 'beer-test', (db) =>
      getClientProfile(db, GREAT_LAKES, { postal_code: '44113', client_name: 'great lakes brewing company' }),
    )) as any;
    assert.equal(found.client_id, GREAT_LAKES);
    assert.equal(found.search_metadata.method, 'postal_code_and_name');
    assert.match(found.search_metadata.sql, /postal_code = \$1 AND lower\(c\.client_name\) = lower\(\$2\)/);
  });

  test('not_found: a postal code and name that match nobody, or another bar (row-level security hides it)', async () => {
    const nobody = (await asUser(pool, 'beer-test', (db) =>
      getClientProfile(db, GREAT_LAKES, { postal_code: '00000', client_name: 'No Such Bar' }),
    )) as any;
    assert.equal(nobody.status, 'not_found');
    assert.equal(nobody.search_metadata.method, 'not_found');
    assert.match(nobody.error, /postal code 00000 with name "No Such Bar"/);

    // Deschutes exists, but this conversation acts for Great Lakes
    const other = (await asUser(pool, 'beer-test', (db) =>
      getClientProfile(db, GREAT_LAKES, { postal_code: '97702', client_name: 'Deschutes Brewery' }),
    )) as any;
    assert.equal(other.status, 'not_found');
    assert.equal(other.client_name, undefined);
  });

  test("an id without a row is not_found, and the fallback it then tries cannot reach another client's row", async () => {
    // The lookup order on the plain function: by id, then by postal code and name (here Great Lakes',
    // which row-level security hides from a conversation acting for another client).
    const missing = (await asUser(pool, 'beer-test', (db) =>
      getClientProfile(db, 'CLT-GONE00', { client_id: 'CLT-GONE00', postal_code: '44113', client_name: 'Great Lakes Brewing Company' }),
    )) as any;
    assert.equal(missing.status, 'not_found');
    assert.equal(missing.search_metadata.method, 'not_found');
    assert.match(missing.error, /client_id CLT-GONE00, nor by postal code 44113 with name "Great Lakes Brewing Company"/);
    assert.deepEqual(missing.search_metadata.searched, {
      client_id: 'CLT-GONE00',
      postal_code: '44113',
      client_name: 'Great Lakes Brewing Company',
    });
  });

  test('a conversation without a client gets an error result, not a profile', async () => {
    const result = await callTool(undefined, { client_id: GREAT_LAKES });
    assert.equal(result.status, 'error');
    assert.match(result.error, /no client/);
  });
});
