// The privacy table (docs/security.md) with SQL that a model writes: the real @google/genai client asks a
// scripted Gemini-compatible server (test/support/fake-gemini.ts) for SQL, and run_analytical_query_tool
// takes it through the guard to PostgreSQL as brigade_beer_sql. Own data: yes. Another client's: no,
// whether the SQL names it directly, through a join, a subquery, a UNION, a view of small groups or a
// settings change (refused by the guard, or confined to nothing by row-level security). Aggregates: yes.
// Last, the same through the whole stack: a beer conversation whose Gemini writes SQL for another client.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type pg from 'pg';
import { loadConfig } from '../../../config.ts';
import { setBeerMinClients } from '../clients-db.ts';
import { asUser, createPool } from '../../../db/pool.ts';
import { executeGuardedAlone } from '../../../sql/execute.ts';
import { guardSql } from '../../../sql/guard.ts';
import { BEER_SQL_POLICY, BEER_SQL_ROLE } from '../sql-policy.ts';
import { SEAL_IDENTITY } from '../../../sql/execute.ts';
import { createGeminiTaskModel } from '../../../model/task-model.ts';
import { analyticalQuerySpec as spec } from '../tools.ts';
import { runAnalyticalQueryTool } from '../analytics.ts';
import type { ToolContext } from '../../../activities/tool-context.ts';
import { type FakeGemini, endsWithToolResults, reply, startFakeGemini } from '../../../../test/support/fake-gemini.ts';
import { freshDatabase } from '../../../../test/support/harness.ts';
import { GUS_GREAT_LAKES, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

const OWN = 'CLT-XLX836'; // Great Lakes Brewing Company, Cleveland, Ohio
const OTHER = 'CLT-CIR922'; // Deschutes Brewery, Bend, Oregon
const KEY = 'test-gemini-key';

let fake: FakeGemini;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let admin: pg.Pool;
let context: ToolContext;

before(async () => {
  fake = await startFakeGemini({ apiKey: KEY });
  database = await freshDatabase();
  pool = createPool(database.url);
  admin = createPool(database.adminUrl, { role: null });
  // as the test app does: idle connections the server drops when the database goes at the end must not crash the file
  for (const each of [pool, admin]) each.on('error', () => undefined);
  const config = loadConfig({ DATABASE_URL: database.url, SQL_STATEMENT_TIMEOUT: '2s' });
  context = {
    db: undefined as unknown as pg.ClientBase, // the analytical tool runs in a transaction of its own
    userId: 'privacy-test',
    conversationId: 'conversation-privacy-test',
    callId: 'call-1',
    client: OWN,
    services: {
      config,
      taskModel: createGeminiTaskModel({
        apiKey: KEY,
        baseUrl: fake.baseUrl,
        model: 'gemini-2.5-flash',
        imageModel: 'unused',
        timeoutMs: 10_000,
      }),
      pool,
    },
  };
});
after(async () => {
  await pool?.end();
  await admin?.end();
  await database?.drop();
  await fake?.close();
});
beforeEach(() => fake.reset());

/** The model answers the question with `sql`; the tool runs as it would in a conversation. */
async function ask(sql: string, question = 'a question'): Promise<any> {
  fake.reset();
  fake.script(reply.text(sql));
  const result = await runAnalyticalQueryTool(spec.args.parse({ question }), context);
  assert.equal(fake.requests.length, 1, 'one SQL generation request');
  return result;
}

// US Census regions, as beer.region_of has them (only the states of the fixture's bars)
const REGION_OF: Record<string, string> = {
  California: 'West',
  Oregon: 'West',
  Colorado: 'West',
  Vermont: 'Northeast',
  'New York': 'Northeast',
  Massachusetts: 'Northeast',
  Pennsylvania: 'Northeast',
  Ohio: 'Midwest',
  Minnesota: 'Midwest',
  Indiana: 'Midwest',
  Michigan: 'Midwest',
  'North Carolina': 'South',
  Delaware: 'South',
  Kentucky: 'South',
};
const regionOf = (state: string) => REGION_OF[state] ?? assert.fail(`no region for ${state}`);

const ownQuantity = async (beer: string) =>
  (await admin.query('SELECT coalesce(sum(quantity), 0)::int AS q FROM beer.purchases WHERE client_id = $1 AND beer = $2', [OWN, beer]))
    .rows[0].q;

describe('own data: yes', () => {
  test('"how many Quilmes did I buy": the SQL from Gemini, fences stripped, runs on the client\'s own rows', async () => {
    const result = await ask(
      "```sql\nSELECT sum(quantity) AS cases FROM purchases WHERE lower(beer) = lower('Quilmes');\n```",
      'How many Quilmes did I buy?',
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, [{ cases: await ownQuantity('Quilmes') }]);
    assert.equal(result.count, 1);
    assert.equal(result.question, 'How many Quilmes did I buy?');
    assert.match(result.sql, /^SELECT sum\(quantity\) AS cases FROM purchases/);
    assert.equal(typeof result.execution_time_ms, 'number');

    // what Gemini was asked: the schema prompt (own tables and aggregates only), the client, the question
    const request = fake.requests[0]!;
    assert.equal(request.stream, false);
    assert.equal(request.apiKey, KEY);
    const prompt = request.body.contents![0]!.parts![0]!.text as string;
    assert.match(prompt, /sales_by_state_beer/);
    assert.match(prompt, /The authenticated client is CLT-XLX836/);
    assert.match(prompt, /Question: How many Quilmes did I buy\?$/);
    assert.doesNotMatch(prompt, /\{schema\}|\{question\}/);
    assert.equal(request.body.generationConfig?.temperature, 0);
  });

  test('naming its own id is fine, and every row is its own', async () => {
    const result = await ask(`SELECT DISTINCT client_id FROM purchases WHERE client_id = '${OWN.toLowerCase()}' OR client_id = '${OWN}'`);
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, [{ client_id: OWN }]);
  });
});

describe("another client's data: no", () => {
  test('named directly: a clear refusal, before anything runs', async () => {
    const result = await ask(`SELECT beer, quantity FROM purchases WHERE client_id = '${OTHER}'`, 'What did Deschutes buy?');
    assert.equal(result.status, 'refused');
    assert.match(result.error, /another client's data \(CLT-CIR922\)\. This conversation acts for CLT-XLX836/);
    assert.equal(result.rows, undefined);
  });

  test('named in lower case, in a comment-free subquery of a CTE: still refused', async () => {
    const result = await ask(`WITH x AS (SELECT * FROM customers WHERE client_id = lower('${OTHER.toLowerCase()}')) SELECT * FROM x`);
    assert.equal(result.status, 'refused');
  });

  test('an id put together so that no constant names it: the database shows nothing', async () => {
    // ('CLT-' || 'CIR922' is refused by the guard, src/agents/beer/test/client-id.test.ts; arithmetic is not folded)
    const result = await ask("SELECT beer, quantity FROM purchases WHERE client_id = 'CLT-CIR' || (900 + 22)::text");
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, []);
    assert.match(result.message, /nothing among your own purchases/);
  });

  test("through a join on the other bar's name: nothing", async () => {
    const result = await ask(
      "SELECT p.beer, p.quantity FROM purchases p JOIN customers c ON c.client_id = p.client_id WHERE c.client_name = 'Deschutes Brewery'",
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, []);
  });

  test('through a subquery over other states: nothing', async () => {
    const result = await ask(
      "SELECT beer, quantity FROM purchases WHERE client_id IN (SELECT client_id FROM customers WHERE client_state = 'Oregon')",
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, []);
  });

  test("through a UNION with everyone else's rows: only its own come back", async () => {
    const result = await ask(
      `SELECT client_id, count(*) AS n FROM purchases GROUP BY client_id UNION ALL SELECT client_id, count(*) FROM purchases WHERE client_id <> '${OWN}' GROUP BY client_id`,
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, [{ client_id: OWN, n: 48 }]);
  });

  test('every client at once: the database has one', async () => {
    const result = await ask(
      'SELECT (SELECT count(*) FROM customers) AS customers, (SELECT count(DISTINCT client_id) FROM purchases) AS buyers',
    );
    assert.deepEqual(result.rows, [{ customers: 1, buyers: 1 }]);
  });

  test('a view of small groups: Oregon (2 clients) is not there, nor any group under 3 clients', async () => {
    const oregon = await ask("SELECT * FROM sales_by_state_beer WHERE state = 'Oregon'");
    assert.equal(oregon.status, 'success');
    assert.deepEqual(oregon.rows, []);
    assert.match(oregon.message, /at least 3 clients/);
    const small = await ask('SELECT * FROM sales_by_brewery WHERE clients < 3');
    assert.deepEqual(small.rows, []);
  });

  test('changing the client from inside the query: set_config, SET and current_setting are refused', async () => {
    for (const sql of [
      "SELECT set_config('brigade.client_id', 'CLT-' || 'CIR922', true), beer FROM purchases",
      "SELECT beer FROM purchases WHERE set_config('brigade.client_id', 'CLT-' || 'CIR922', true) IS NOT NULL",
      "SET brigade.client_id = 'CLT-CIR922'",
      "SELECT current_setting('brigade.client_id')",
      "SELECT set_config('role', 'brigade_app', true)",
    ]) {
      const result = await ask(sql);
      assert.equal(result.status, 'refused', `${sql}: ${JSON.stringify(result)}`);
    }
  });

  test('other tables, catalogs and writes are refused', async () => {
    for (const [sql, reason] of [
      ['SELECT * FROM public.customers', /public\.customers may not be queried/],
      ['SELECT * FROM orders', /orders may not be queried/],
      ['SELECT relname FROM pg_catalog.pg_class', /may not be queried/],
      ["DELETE FROM purchases WHERE client_id = 'CLT-XLX836'", /DELETE is not allowed/],
      ['UPDATE purchases SET quantity = 1', /UPDATE is not allowed|only SELECT/],
      ['SELECT 1; DELETE FROM purchases', /one statement/],
    ] as const) {
      const result = await ask(sql);
      assert.equal(result.status, 'refused', sql);
      assert.match(result.error, reason, sql);
    }
  });

  test('the database itself confines: the guard without the named-client check, and brigade_beer_sql reading a table it lacks', async () => {
    const guarded = await guardSql(`SELECT beer FROM purchases WHERE client_id = '${OTHER}'`, BEER_SQL_POLICY);
    assert.ok(guarded.ok);
    const run = (sql: string) =>
      executeGuardedAlone(
        pool,
        { ok: true, kind: 'select', sql },
        {
          role: BEER_SQL_ROLE,
          userId: 'privacy-test',
          statementTimeoutMs: 2_000,
          maxRows: 100,
          maxUpdatedRows: 0,
          readOnly: true,
          searchPath: 'beer',
          settings: { 'brigade.client_id': OWN },
        },
      );
    assert.deepEqual(await run(guarded.sql), { status: 'success', rows: [], count: 0, truncated: false });
    const denied = await run('SELECT * FROM public.customers');
    assert.equal(denied.status, 'error');
    assert.match((denied as { error: string }).error, /permission denied/);
    const noClient = await executeGuardedAlone(
      pool,
      { ok: true, kind: 'select', sql: 'SELECT count(*)::int AS n FROM purchases' },
      {
        role: BEER_SQL_ROLE,
        userId: 'privacy-test',
        statementTimeoutMs: 2_000,
        maxRows: 100,
        maxUpdatedRows: 0,
        readOnly: true,
        searchPath: 'beer',
      },
    );
    assert.deepEqual((noClient as { rows: unknown[] }).rows, [{ n: 0 }], 'no client set: no rows');
  });

  test('a set_config that got past the guard: the database refuses it, and says only that', async () => {
    const sneaky = `SELECT p.client_id, p.beer FROM (SELECT set_config('brigade.client_id', '${OTHER}', true) AS c) AS s, purchases p`;
    const result = await executeGuardedAlone(
      pool,
      { ok: true, kind: 'select', sql: sneaky },
      {
        role: BEER_SQL_ROLE,
        userId: 'privacy-test',
        statementTimeoutMs: 2_000,
        maxRows: 100,
        maxUpdatedRows: 0,
        readOnly: true,
        searchPath: 'beer',
        settings: { 'brigade.client_id': OWN },
      },
    );
    assert.deepEqual(result, { status: 'error', error: 'Query failed: permission denied for function set_config' });
  });
});

describe('aggregates: yes', () => {
  test('"best-selling beer in California": across clients, from the view', async () => {
    const result = await ask(
      "SELECT beer, total_quantity, clients FROM sales_by_state_beer WHERE lower(state) = lower('California') ORDER BY total_quantity DESC LIMIT 1",
      'What is the best-selling beer in California?',
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    const expected = (
      await admin.query(
        `SELECT p.beer, sum(p.quantity)::int AS total_quantity, count(DISTINCT p.client_id)::int AS clients
           FROM beer.purchases p JOIN beer.customers c USING (client_id) WHERE c.client_state = 'California'
          GROUP BY p.beer ORDER BY 2 DESC LIMIT 1`,
      )
    ).rows[0];
    assert.deepEqual(result.rows, [expected]);
    assert.ok(expected.clients >= 3);
  });

  test('own rows beside the aggregate: how this bar compares', async () => {
    const result = await ask(
      'SELECT p.beer, sum(p.quantity) AS mine, max(b.total_quantity) AS everyone FROM purchases p JOIN sales_by_beer b ON b.beer = p.beer GROUP BY p.beer ORDER BY p.beer LIMIT 10',
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.ok(result.rows.length > 0);
    for (const row of result.rows) assert.ok(row.everyone > row.mine, `${row.beer}: everyone bought more than this bar`);
  });

  test('at most 100 rows: a larger LIMIT is lowered to 100; without a LIMIT the result says it was cut', async () => {
    const limited = await ask('SELECT * FROM sales_by_beer CROSS JOIN sales_by_month LIMIT 1000');
    assert.equal(limited.status, 'success', JSON.stringify(limited));
    assert.equal(limited.count, 100);
    assert.match(limited.sql, /LIMIT 100/);
    const unlimited = await ask('SELECT * FROM sales_by_beer CROSS JOIN sales_by_month');
    assert.equal(unlimited.count, 100);
    assert.equal(unlimited.truncated, true);
    assert.match(unlimited.message, /Only the first 100 rows are shown/);
  });

  test('statement_timeout cancels a query that runs too long, as an error result', async () => {
    const quick = {
      ...context,
      services: { ...context.services, config: loadConfig({ DATABASE_URL: database.url, SQL_STATEMENT_TIMEOUT: '300ms' }) },
    };
    fake.reset();
    fake.script(reply.text('SELECT count(*) FROM purchases a, purchases b, purchases c, purchases d, purchases e'));
    const started = Date.now();
    const result: any = await runAnalyticalQueryTool({ question: 'a slow one' }, quick);
    assert.equal(result.status, 'error', JSON.stringify(result));
    assert.match(result.error, /ran longer than 300 ms and was cancelled/);
    assert.ok(Date.now() - started < 5_000);
  });
});

describe('aggregates cannot be taken apart (differencing, granularities, filters)', () => {
  type Cell = { clients: number; purchases: number; total_quantity: number } & Record<string, unknown>;
  const view = async (name: string): Promise<Cell[]> => {
    const result = await ask(`SELECT * FROM ${name}`);
    assert.equal(result.status, 'success', JSON.stringify(result));
    return result.rows;
  };
  const sum = (cells: Cell[], pick: (cell: Cell) => boolean = () => true) =>
    cells.filter(pick).reduce((total, cell) => total + Number(cell.total_quantity), 0);
  // as the worker does at start, from BEER_MIN_CLIENTS
  const setK = (k: number) => setBeerMinClients(pool, k);
  after(() => setK(3));

  for (const k of [3, 4]) {
    test(`k = ${k}: every cell has k clients, totals equal their parts, and a shown state leaves 0 or k in its region`, async () => {
      await setK(k);
      const views: Record<string, Cell[]> = {};
      // one at a time: the scripted model answers one request at a time
      for (const name of [
        'sales_by_beer',
        'sales_by_brewery',
        'sales_by_month',
        'sales_by_region',
        'sales_by_region_beer',
        'sales_by_state',
        'sales_by_state_beer',
      ]) {
        views[name] = await view(name);
      }
      for (const [name, cells] of Object.entries(views)) {
        for (const cell of cells) assert.ok(Number(cell.clients) >= k, `${name} ${JSON.stringify(cell)} has ${k}+ clients`);
      }
      assert.ok(views.sales_by_beer!.length > 0 && views.sales_by_month!.length > 0, 'something is still published');

      // One grand total: no view's total minus another's is a hidden group.
      const grand = sum(views.sales_by_month!);
      for (const name of ['sales_by_beer', 'sales_by_brewery', 'sales_by_region', 'sales_by_region_beer'])
        assert.equal(sum(views[name]!), grand, name);
      // A total minus its finer rows is zero.
      for (const cell of views.sales_by_beer!) {
        assert.equal(
          sum(views.sales_by_region_beer!, (part) => part.beer === cell.beer),
          Number(cell.total_quantity),
          `beer ${cell.beer}`,
        );
      }
      for (const cell of views.sales_by_region!) {
        assert.equal(
          sum(views.sales_by_region_beer!, (part) => part.region === cell.region),
          Number(cell.total_quantity),
          `region ${cell.region}`,
        );
      }
      for (const cell of views.sales_by_state!) {
        assert.equal(
          sum(views.sales_by_state_beer!, (part) => part.state === cell.state),
          Number(cell.total_quantity),
          `state ${cell.state}`,
        );
      }
      // A region's cell minus the states shown in it: no clients, or k of them (a bar has one state, so
      // clients subtract exactly).
      for (const parent of views.sales_by_region_beer!) {
        const shown = views.sales_by_state_beer!.filter(
          (child) => child.beer === parent.beer && regionOf(String(child.state)) === parent.region,
        );
        const rest = Number(parent.clients) - shown.reduce((total, child) => total + Number(child.clients), 0);
        assert.ok(rest === 0 || rest >= k, `${parent.region}/${parent.beer}: the rest has ${rest} clients`);
      }
    });
  }

  test('the differencing attack that recovered one or two bars: beer total minus its state rows', async () => {
    // Before: sales_by_beer[b] - sum(sales_by_state_beer[*, b]) was the purchases of the states left out,
    // for some beers one or two bars. Now that difference is the rest of region cells of k+ clients.
    const beers = await view('sales_by_beer');
    const states = await view('sales_by_state_beer');
    const regions = await view('sales_by_region_beer');
    for (const beer of beers) {
      const hidden = Number(beer.total_quantity) - sum(states, (row) => row.beer === beer.beer);
      if (hidden === 0) continue;
      const restClients = regions
        .filter((row) => row.beer === beer.beer)
        .map(
          (row) =>
            Number(row.clients) -
            states
              .filter((s) => s.beer === beer.beer && regionOf(String(s.state)) === row.region)
              .reduce((t, s) => t + Number(s.clients), 0),
        );
      assert.ok(
        restClients.every((clients) => clients === 0 || clients >= 3),
        `${beer.beer}: the difference is made of groups of 3+ (${restClients})`,
      );
    }
    // and the groups that the old views let a subtraction recover are not anywhere in the answers
    const small = (
      await admin.query(
        `SELECT c.client_state AS state, p.beer, sum(p.quantity)::int AS q FROM beer.purchases p JOIN beer.customers c USING (client_id)
          WHERE p.client_id <> $1 GROUP BY 1, 2 HAVING count(DISTINCT p.client_id) < 3`,
        [OWN],
      )
    ).rows;
    assert.ok(small.length > 0);
    for (const group of small) {
      assert.ok(!states.some((row) => row.state === group.state && row.beer === group.beer), `${group.state}/${group.beer} is not shown`);
    }
  });

  test("filters that isolate one client find nothing, and the asking bar's own purchases are in no aggregate", async () => {
    // Ohio is this bar alone; Oregon has two bars; a brewery one bar buys from.
    const lone = (
      await admin.query(
        `SELECT brewery FROM beer.purchases WHERE client_id <> $1 GROUP BY brewery HAVING count(DISTINCT client_id) = 1 LIMIT 1`,
        [OWN],
      )
    ).rows[0]?.brewery;
    for (const sql of [
      "SELECT * FROM sales_by_state WHERE state = 'Ohio'",
      "SELECT * FROM sales_by_state_beer WHERE state IN ('Ohio', 'Oregon')",
      'SELECT * FROM sales_by_beer WHERE clients < 3',
      ...(lone ? [`SELECT * FROM sales_by_brewery WHERE brewery = '${String(lone).replaceAll("'", "''")}'`] : []),
    ]) {
      const result = await ask(sql);
      assert.equal(result.status, 'success', JSON.stringify(result));
      assert.deepEqual(result.rows, [], sql);
    }
    // Subtracting its own purchases from a group must not leave fewer than k others: they are not in it.
    const own = (await admin.query('SELECT sum(quantity)::int AS q FROM beer.purchases WHERE client_id = $1', [OWN])).rows[0].q as number;
    const everyone = (await admin.query('SELECT sum(quantity)::int AS q FROM beer.purchases')).rows[0].q as number;
    assert.ok(sum(await view('sales_by_month')) <= everyone - own);
    const mine = await ask('SELECT p.beer, sum(p.quantity) AS mine FROM purchases p GROUP BY p.beer');
    const byBeer = await view('sales_by_beer');
    for (const row of mine.rows as { beer: string }[]) {
      const cell = byBeer.find((b) => b.beer === row.beer);
      if (!cell) continue;
      const others = (
        await admin.query('SELECT count(DISTINCT client_id)::int AS n FROM beer.purchases WHERE beer = $1 AND client_id <> $2', [
          row.beer,
          OWN,
        ])
      ).rows[0].n as number;
      assert.ok(Number(cell.clients) <= others, `${row.beer}: counts only other bars`);
    }
  });

  test('the published set is not reachable directly: no client ids, not even as the view owner function', async () => {
    const direct = await ask('SELECT * FROM beer.published_purchases()');
    assert.notEqual(direct.status, 'success');
    for (const sql of ['SELECT * FROM beer.published_purchases()', "SELECT * FROM beer.purchases_of_others('x')"]) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query("SELECT set_config('brigade.user_id', 'u', true), set_config('brigade.client_id', $1, true)", [OWN]);
        await client.query(SEAL_IDENTITY);
        await client.query(`SET LOCAL ROLE ${BEER_SQL_ROLE}`);
        await assert.rejects(client.query(sql), { code: '42501' }, sql);
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }
  });
});

describe('through the whole stack', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { GEMINI_API_KEY: KEY, GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '10s' } });
  });
  after(async () => {
    await app?.stop();
  });

  test("a bar's token, a chat model that asks for another bar's purchases, SQL that names it: refused, and the model is told why", async () => {
    const created = await app.call('POST', '/v1/conversations', { token: GUS_GREAT_LAKES, body: { agent: 'beer' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    fake.scriptFn((request) => {
      if (!request.stream) return reply.text(`SELECT beer, quantity FROM purchases WHERE client_id = '${OTHER}'`);
      if (endsWithToolResults(request)) return reply.text('I can only share your own purchases, or aggregates across bars.');
      return reply.calls({ name: 'run_analytical_query_tool', args: { question: 'What did Deschutes Brewery buy?' } });
    });
    const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, {
      token: GUS_GREAT_LAKES,
      body: { text: 'What did Deschutes Brewery buy?' },
    });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const tool = turn.body.messages.find((message: any) => message.role === 'tool');
    assert.equal(tool.tool, 'run_analytical_query_tool');
    assert.equal(tool.result.status, 'refused', JSON.stringify(tool.result));
    assert.match(tool.result.error, /CLT-CIR922/);
    const declared = fake.requests.find((r) => r.stream)!.body.tools![0]!.functionDeclarations!.map((d) => d.name);
    assert.ok(declared.includes('get_client_profile_tool') && declared.includes('run_analytical_query_tool'));
    const toldModel = fake.requests.filter((r) => r.stream).at(-1)!;
    assert.match(JSON.stringify(toldModel.body.contents), /refused/);
    assert.equal(turn.body.messages.at(-1).text, 'I can only share your own purchases, or aggregates across bars.');
  });
});
