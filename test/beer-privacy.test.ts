// The privacy table of seed 004 with SQL that a model writes: the real @google/genai client asks a
// scripted Gemini-compatible server (test/support/fake-gemini.ts) for SQL, and run_analytical_query_tool
// takes it through the guard to PostgreSQL as brigade_beer_sql. Own data: yes. Another client's: no,
// whether the SQL names it directly, through a join, a subquery, a UNION, a view of small groups or a
// settings change (refused by the guard, or confined to nothing by row-level security). Aggregates: yes.
// Last, the same through the whole stack: a beer conversation whose Gemini writes SQL for another client.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { asUser, createPool } from '../src/db/pool.ts';
import { executeGuardedAlone } from '../src/sql/execute.ts';
import { guardSql } from '../src/sql/guard.ts';
import { BEER_SQL_POLICY, BEER_SQL_ROLE } from '../src/agents/beer/sql-policy.ts';
import { createGeminiTaskModel } from '../src/model/task-model.ts';
import { analyticalQuerySpec as spec } from '../src/agents/beer/tools.ts';
import { runAnalyticalQueryTool } from '../src/agents/beer/analytics.ts';
import type { ToolContext } from '../src/activities/tool-context.ts';
import { type FakeGemini, endsWithToolResults, reply, startFakeGemini } from './support/fake-gemini.ts';
import { freshDatabase } from './support/harness.ts';
import { GUS_GREAT_LAKES, type TestApp, startTestApp } from './support/test-app.ts';

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
  const config = loadConfig({ DATABASE_URL: database.url, SQL_STATEMENT_TIMEOUT: '2s' });
  context = {
    db: undefined as unknown as pg.ClientBase, // the analytical tool runs in a transaction of its own
    userId: 'privacy-test',
    conversationId: 'conversation-privacy-test',
    callId: 'call-1',
    client: OWN,
    services: {
      config,
      taskModel: createGeminiTaskModel({ apiKey: KEY, baseUrl: fake.baseUrl, model: 'gemini-2.5-flash', imageModel: 'unused', timeoutMs: 10_000 }),
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

const ownQuantity = async (beer: string) =>
  (await admin.query('SELECT coalesce(sum(quantity), 0)::int AS q FROM beer.purchases WHERE client_id = $1 AND beer = $2', [OWN, beer])).rows[0].q;

describe('own data: yes', () => {
  test('"how many Quilmes did I buy": the SQL from Gemini, fences stripped, runs on the client\'s own rows', async () => {
    const result = await ask("```sql\nSELECT sum(quantity) AS cases FROM purchases WHERE lower(beer) = lower('Quilmes');\n```", 'How many Quilmes did I buy?');
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
    const result = await ask(`SELECT beer, quantity FROM purchases WHERE client_id = '${OTHER}'`, "What did Deschutes buy?");
    assert.equal(result.status, 'refused');
    assert.match(result.error, /another client's data \(CLT-CIR922\)\. This conversation acts for CLT-XLX836/);
    assert.equal(result.rows, undefined);
  });

  test('named in lower case, in a comment-free subquery of a CTE: still refused', async () => {
    const result = await ask(`WITH x AS (SELECT * FROM customers WHERE client_id = lower('${OTHER.toLowerCase()}')) SELECT * FROM x`);
    assert.equal(result.status, 'refused');
  });

  test('an id put together so that no constant names it: the database shows nothing', async () => {
    const result = await ask("SELECT beer, quantity FROM purchases WHERE client_id = 'CLT-' || 'CIR922'");
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, []);
    assert.match(result.message, /nothing among your own purchases/);
  });

  test('through a join on the other bar\'s name: nothing', async () => {
    const result = await ask("SELECT p.beer, p.quantity FROM purchases p JOIN customers c ON c.client_id = p.client_id WHERE c.client_name = 'Deschutes Brewery'");
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, []);
  });

  test('through a subquery over other states: nothing', async () => {
    const result = await ask("SELECT beer, quantity FROM purchases WHERE client_id IN (SELECT client_id FROM customers WHERE client_state = 'Oregon')");
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, []);
  });

  test('through a UNION with everyone else\'s rows: only its own come back', async () => {
    const result = await ask(
      `SELECT client_id, count(*) AS n FROM purchases GROUP BY client_id UNION ALL SELECT client_id, count(*) FROM purchases WHERE client_id <> '${OWN}' GROUP BY client_id`,
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, [{ client_id: OWN, n: 48 }]);
  });

  test('every client at once: the database has one', async () => {
    const result = await ask('SELECT (SELECT count(*) FROM customers) AS customers, (SELECT count(DISTINCT client_id) FROM purchases) AS buyers');
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
      executeGuardedAlone(pool, { ok: true, kind: 'select', sql }, {
        role: BEER_SQL_ROLE,
        userId: 'privacy-test',
        statementTimeoutMs: 2_000,
        maxRows: 100,
        maxUpdatedRows: 0,
        readOnly: true,
        searchPath: 'beer',
        settings: { 'brigade.client_id': OWN },
      });
    assert.deepEqual(await run(guarded.sql), { status: 'success', rows: [], count: 0, truncated: false });
    const denied = await run('SELECT * FROM public.customers');
    assert.equal(denied.status, 'error');
    assert.match((denied as { error: string }).error, /permission denied/);
    const noClient = await executeGuardedAlone(pool, { ok: true, kind: 'select', sql: 'SELECT count(*)::int AS n FROM purchases' }, {
      role: BEER_SQL_ROLE, userId: 'privacy-test', statementTimeoutMs: 2_000, maxRows: 100, maxUpdatedRows: 0, readOnly: true, searchPath: 'beer',
    });
    assert.deepEqual((noClient as { rows: unknown[] }).rows, [{ n: 0 }], 'no client set: no rows');
  });

  test('a set_config that got past the guard: the database refuses it, and says only that', async () => {
    const sneaky = `SELECT p.client_id, p.beer FROM (SELECT set_config('brigade.client_id', '${OTHER}', true) AS c) AS s, purchases p`;
    const result = await executeGuardedAlone(pool, { ok: true, kind: 'select', sql: sneaky }, {
      role: BEER_SQL_ROLE,
      userId: 'privacy-test',
      statementTimeoutMs: 2_000,
      maxRows: 100,
      maxUpdatedRows: 0,
      readOnly: true,
      searchPath: 'beer',
      settings: { 'brigade.client_id': OWN },
    });
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
    const quick = { ...context, services: { ...context.services, config: loadConfig({ DATABASE_URL: database.url, SQL_STATEMENT_TIMEOUT: '300ms' }) } };
    fake.reset();
    fake.script(reply.text('SELECT count(*) FROM purchases a, purchases b, purchases c, purchases d, purchases e'));
    const started = Date.now();
    const result: any = await runAnalyticalQueryTool({ question: 'a slow one' }, quick);
    assert.equal(result.status, 'error', JSON.stringify(result));
    assert.match(result.error, /ran longer than 300 ms and was cancelled/);
    assert.ok(Date.now() - started < 5_000);
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

  test('a bar\'s token, a chat model that asks for another bar\'s purchases, SQL that names it: refused, and the model is told why', async () => {
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
