// Hostile shapes of SQL that a model writes (issue 17, item 3): queries nested deep enough to overflow a
// recursive walk, values built to be huge, and results too large to hold. Each is the tool's answer (an
// error the model can act on), never an exception Temporal would retry, and the database ends what it
// runs within the statement timeout plus a second, with bounded memory settings.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { asUser, createPool } from '../../src/db/pool.ts';
import { createOfflineTaskModel } from '../../src/model/offline-tasks.ts';
import { executeGuarded, executeGuardedAlone } from '../../src/sql/execute.ts';
import { MAX_GROWTH, MAX_TREE_DEPTH, guardSql } from '../../src/sql/guard.ts';
import { RECIPES_SQL_POLICY } from '../../src/agents/recipes/sql-policy.ts';
import { recipesImplementations } from '../../src/agents/recipes/implementations.ts';
import { RECIPES_SQL_ROLE } from '../../src/agents/recipes/sql-tool.ts';
import type { ToolContext } from '../../src/activities/tool-context.ts';
import { freshDatabase } from '../support/harness.ts';

const TIMEOUT_MS = 1_000;
const USER = 'hostile-user';
const tool = recipesImplementations.execute_recipe_sql!;
const config = loadConfig({ SQL_STATEMENT_TIMEOUT: `${TIMEOUT_MS}ms` });

let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let admin: pg.Pool;

before(async () => {
  database = await freshDatabase();
  pool = createPool(database.url, { max: 4 });
  admin = createPool(database.adminUrl, { role: null });
  // 60 recipes of about 4 KB each: enough rows for a cross join that runs for minutes, and a result
  // far larger than the cap
  const step = 'Stir with ice until very cold, then strain. '.repeat(90);
  for (let i = 0; i < 60; i++) {
    await admin.query(
      "INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions) VALUES ($1, $2, $3, 'cocktail', '[]', $4)",
      [randomUUID(), USER, `Recipe ${i}`, JSON.stringify([step])],
    );
  }
});
after(async () => {
  await pool?.end();
  await admin?.end();
  await database?.drop();
});

const context = (db: pg.ClientBase): ToolContext => ({
  db,
  userId: USER,
  conversationId: randomUUID(),
  callId: randomUUID(),
  services: { config, taskModel: createOfflineTaskModel(), pool },
});

/** The tool as the runtime runs it, timed. */
async function run(query: string): Promise<{ result: any; ms: number }> {
  const started = performance.now();
  const result = await asUser(pool, USER, (db) => tool({ query }, context(db)));
  return { result, ms: performance.now() - started };
}

describe('shapes that overflowed the guard are refused as the tool answer', () => {
  const deep = [
    ['2,400 nested NOTs', `SELECT name FROM saved_recipes WHERE ${'NOT '.repeat(2_400)}is_deleted`],
    ['700 nested subselects', `SELECT ${'(SELECT '.repeat(700)}1${')'.repeat(700)} FROM saved_recipes`],
    ['1,500 nested additions', `SELECT ${'1 + ('.repeat(1_500)}1${')'.repeat(1_500)} FROM saved_recipes`],
    ['600 nested function calls', `SELECT ${'lower('.repeat(600)}name${')'.repeat(600)} FROM saved_recipes`],
  ] as const;
  for (const [what, query] of deep) {
    test(what, async () => {
      const { result } = await run(query);
      assert.equal(result.status, 'error');
      assert.match(result.error, new RegExp(`^Query blocked: the query (nests more than ${MAX_TREE_DEPTH} levels|is nested too deeply)`));
    });
  }

  test('a query nested as deep as a person writes still runs', async () => {
    const query = `SELECT name FROM saved_recipes WHERE ${'NOT ('.repeat(9)}is_deleted${')'.repeat(9)} AND id IN (SELECT id FROM (SELECT id FROM (SELECT id FROM saved_recipes) a) b) ORDER BY name LIMIT 3`;
    const { result } = await run(query);
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(result.count, 3);
  });
});

describe('values built to be huge are refused before they run', () => {
  const bombs = [
    [
      'a cast to char(10485760)',
      "SELECT 'x'::char(10485760) FROM saved_recipes",
      /type modifier \(10485760\) of bpchar is larger than 1000/,
    ],
    ['a cast to varchar(1000000)', 'SELECT name::varchar(1000000) FROM saved_recipes', /type modifier/],
    [
      'nested replace of a long literal',
      `SELECT replace(replace(replace(name, 'e', '${'e'.repeat(40)}'), 'e', '${'e'.repeat(40)}'), 'e', '${'e'.repeat(40)}') FROM saved_recipes`,
      /could make a value \d+ times larger than its input, more than the 100 allowed/,
    ],
    [
      'regexp_replace matching everywhere',
      `SELECT regexp_replace(regexp_replace(name, '', '${'x'.repeat(30)}', 'g'), '', '${'x'.repeat(30)}', 'g') FROM saved_recipes`,
      /times larger/,
    ],
    ['a replacement that is not a literal', "SELECT replace(name, 'e', name) FROM saved_recipes", /literal replacement/],
    [
      'a recursive query that doubles a value',
      'WITH RECURSIVE t(s, n) AS (SELECT name, 1 FROM saved_recipes UNION ALL SELECT s || s, n + 1 FROM t WHERE n < 40) SELECT length(s) FROM t',
      /WITH RECURSIVE is not allowed/,
    ],
  ] as const;
  for (const [what, query, refusal] of bombs) {
    test(what, async () => {
      const { result } = await run(query);
      assert.equal(result.status, 'error');
      assert.match(result.error, /^Query blocked: /);
      assert.match(result.error, refusal);
    });
  }

  test(`replace() with modest growth (under ${MAX_GROWTH}x) still runs`, async () => {
    const { result } = await run(
      "SELECT replace(replace(name, ' ', '_'), 'Recipe', 'Cocktail recipe') AS n FROM saved_recipes ORDER BY n LIMIT 1",
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(result.rows, [{ n: 'Cocktail recipe_0' }]);
  });
});

describe('what the database runs ends in time and in bounded memory', () => {
  test('a cross join that would run for minutes ends within the statement timeout plus a second', async () => {
    const { result, ms } = await run(
      'SELECT count(*) FROM saved_recipes a, saved_recipes b, saved_recipes c, saved_recipes d, saved_recipes e',
    );
    assert.equal(result.status, 'error');
    assert.match(result.error, /ran longer than 1 s and was cancelled/);
    assert.ok(ms < TIMEOUT_MS + 1_000, `ended after ${Math.round(ms)} ms`);
  });

  test('a string aggregated over a cross join ends within the statement timeout plus a second', async () => {
    const { result, ms } = await run(
      "SELECT length(string_agg(a.instructions::text || b.instructions::text, '')) FROM saved_recipes a, saved_recipes b, saved_recipes c",
    );
    assert.equal(result.status, 'error', JSON.stringify(result).slice(0, 300));
    assert.ok(ms < TIMEOUT_MS + 1_000, `ended after ${Math.round(ms)} ms`);
  });

  test('work_mem and temp_file_limit are lowered for the query, and restored after', async () => {
    const guarded = {
      ok: true as const,
      kind: 'select' as const,
      sql: "SELECT current_setting('work_mem') AS w, current_setting('temp_file_limit') AS t",
    };
    const result = await executeGuardedAlone(pool, guarded, {
      role: RECIPES_SQL_ROLE,
      userId: USER,
      statementTimeoutMs: TIMEOUT_MS,
      maxRows: 5,
      maxUpdatedRows: 0,
      readOnly: true,
    });
    assert.deepEqual(result, { status: 'success', rows: [{ w: '4MB', t: '64MB' }], count: 1, truncated: false });
  });

  test('a sort that spills more than temp_file_limit is stopped by PostgreSQL', async () => {
    const guarded = {
      ok: true as const,
      kind: 'select' as const,
      sql: 'SELECT a.instructions::text || b.instructions::text AS s FROM saved_recipes a, saved_recipes b, saved_recipes c ORDER BY 1',
    };
    const result = await executeGuardedAlone(pool, guarded, {
      role: RECIPES_SQL_ROLE,
      userId: USER,
      statementTimeoutMs: 20_000,
      maxRows: 5,
      maxUpdatedRows: 0,
      readOnly: true,
    });
    assert.equal(result.status, 'error');
    assert.match((result as { error: string }).error, /temporary file size exceeds "temp_file_limit" \(65536kB\)/);
  });
});

describe('a result larger than the cap', () => {
  test('is refused after reading about one batch past the cap, not whole', async () => {
    // 60 rows of about 4 KB against a 16 KB cap
    const guarded = await guardSql('SELECT name, instructions FROM saved_recipes', RECIPES_SQL_POLICY);
    assert.ok(guarded.ok);
    const client = await pool.connect();
    // what PostgreSQL handed the worker, counted at the client: the rows of every FETCH
    let fetched = 0;
    const counting = new Proxy(client, {
      get(target, property) {
        if (property !== 'query') {
          const value = Reflect.get(target, property);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: Parameters<pg.PoolClient['query']>) => {
          const answer = await (target.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
          const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
          if (text.startsWith('FETCH')) fetched += answer.rowCount ?? 0;
          return answer;
        };
      },
    });
    try {
      await client.query('BEGIN');
      const result = await executeGuarded(counting, guarded, {
        role: RECIPES_SQL_ROLE,
        userId: USER,
        statementTimeoutMs: TIMEOUT_MS,
        maxRows: 50,
        maxUpdatedRows: 0,
        maxResultChars: 16 * 1024,
      });
      assert.deepEqual(result, {
        status: 'error',
        error: 'Query failed: the result is larger than the 16 KB allowed; select fewer columns or rows',
      });
      assert.ok(fetched <= 10, `read ${fetched} rows of 51 asked for`);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});

describe('refusals say why and nothing more', () => {
  const run = (sql: string, kind: 'select' | 'update') =>
    asUser(pool, USER, async (db) =>
      executeGuarded(
        db,
        { ok: true, kind, sql },
        {
          role: RECIPES_SQL_ROLE,
          userId: USER,
          statementTimeoutMs: TIMEOUT_MS,
          maxRows: 5,
          maxUpdatedRows: 1,
        },
      ),
    );

  test('a SELECT of a table the role may not read: the permission error alone', async () => {
    assert.deepEqual(await run('SELECT * FROM conversations', 'select'), {
      status: 'error',
      error: 'Query failed: permission denied for table conversations',
    });
  });

  test('an UPDATE of a column the role may not write: the error and which columns may change', async () => {
    const result = await run("UPDATE saved_recipes SET user_id = 'someone' WHERE name = 'Recipe 1'", 'update');
    assert.deepEqual(result, {
      status: 'error',
      error: 'Query failed: permission denied for table saved_recipes (only the columns a user may change can be updated)',
    });
  });
});
