// execute_recipe_sql against real PostgreSQL: the hostile corpus, the seeds' legitimate queries, the
// one-row UPDATE limit, restore, immutable columns, the timeout, and the database role on its own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { asUser, createPool } from '../../../db/pool.ts';
import { SEAL_IDENTITY, executeGuarded, executeGuardedAlone } from '../../../sql/execute.ts';
import { guardSql } from '../../../sql/guard.ts';
import { RECIPES_SQL_POLICY } from '../sql-policy.ts';
import type { SqlPolicy } from '../../../sql/policy.ts';
import { loadConfig } from '../../../config.ts';
import { RecipeContent } from '../recipe.ts';
import { createOfflineTaskModel } from '../../../model/offline-tasks.ts';
import { recipesImplementations } from '../implementations.ts';
import { type RecipeSqlResult, RECIPES_SQL_ROLE } from '../sql-tool.ts';
import type { ToolContext } from '../../../activities/tool-context.ts';
import { freshDatabase } from '../../../../test/support/harness.ts';
import {
  A1,
  A2,
  A3,
  A4,
  ALICE_LIVE,
  B1,
  B2,
  CORPUS,
  type CorpusEntry,
  FIXTURE,
  LEAK_MARKERS,
} from '../../../../test/support/sql-corpus.ts';

const TIMEOUT_MS = 400;
// the implementation the worker registers, with the timeout from the setting, as in production
const tool = recipesImplementations.execute_recipe_sql!;
const config = loadConfig({ SQL_STATEMENT_TIMEOUT: `${TIMEOUT_MS}ms` });

let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let admin: pg.Client;

async function resetFixture(): Promise<void> {
  await admin.query('DELETE FROM saved_recipes');
  for (const recipe of FIXTURE) {
    await admin.query(
      `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, servings, tags, is_deleted, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        recipe.id,
        recipe.user_id,
        recipe.name,
        recipe.recipe_type,
        JSON.stringify(recipe.ingredients),
        JSON.stringify(recipe.instructions),
        recipe.prep_time,
        recipe.servings,
        JSON.stringify(recipe.tags),
        recipe.is_deleted,
        recipe.created_at,
      ],
    );
  }
}

const snapshot = async (where = 'true'): Promise<string> =>
  JSON.stringify((await admin.query(`SELECT * FROM saved_recipes WHERE ${where} ORDER BY id`)).rows);

const context = (db: pg.ClientBase, userId: string): ToolContext => ({
  db,
  userId,
  conversationId: randomUUID(),
  callId: randomUUID(),
  services: { config, taskModel: createOfflineTaskModel(), pool },
});

/** Runs the tool as the runtime does: inside alice's transaction as brigade_app, then checks the transaction is as it was. */
async function run(query: string, userId = 'alice'): Promise<any> {
  return asUser(pool, userId, async (db) => {
    const result = await tool({ query }, context(db, userId));
    const after = await db.query(
      "SELECT current_user AS role, current_setting('statement_timeout') AS timeout, current_setting('brigade.user_id') AS user_id",
    );
    assert.deepEqual(after.rows[0], { role: 'brigade_app', timeout: '0', user_id: userId }, 'the runtime transaction is left as it was');
    return result;
  });
}

before(async () => {
  database = await freshDatabase();
  pool = createPool(database.url, { max: 4 });
  admin = new pg.Client({ connectionString: database.adminUrl });
  await admin.connect();
  await resetFixture();
});

after(async () => {
  await admin?.end();
  await pool?.end();
  await database?.drop();
});

function assertConfined(entry: CorpusEntry, result: RecipeSqlResult): void {
  // the query is echoed back in an error as it was sent: only what the database or the guard says counts
  const { query: _echo, ...answer } = result as RecipeSqlResult & { query?: string };
  const text = JSON.stringify(answer);
  for (const marker of LEAK_MARKERS) assert.ok(!text.includes(marker), `leaked ${marker}: ${text}`);
  if (result.status !== 'success' || !('rows' in result)) return;
  for (const row of result.rows) if ('user_id' in row) assert.equal(row.user_id, 'alice');
}

describe('the corpus of hostile and tricky queries', () => {
  test('has at least 100 entries, each with a reason', () => {
    assert.ok(CORPUS.length >= 100, `${CORPUS.length} entries`);
    for (const entry of CORPUS) assert.ok(entry.why.length > 3, entry.sql);
  });

  for (const entry of CORPUS) {
    test(`${entry.group}: ${entry.why}`, async () => {
      const before = await snapshot();
      const othersBefore = await snapshot(`user_id <> 'alice' OR is_deleted`);
      const result = await run(entry.sql);
      const expect = entry.expect;
      assertConfined(entry, result);
      if ('refused' in expect) {
        assert.equal(result.status, 'error', JSON.stringify(result));
        assert.match((result as { error: string }).error, /^Query blocked: /);
        assert.match((result as { error: string }).error, expect.refused);
        assert.equal((result as { query: string }).query, entry.sql);
        // refused by the guard: it never reached the database
        assert.equal((await guardSql(entry.sql, RECIPES_SQL_POLICY)).ok, false);
      } else if ('failed' in expect) {
        assert.equal(result.status, 'error', JSON.stringify(result));
        assert.match((result as { error: string }).error, expect.failed);
        assert.equal((await guardSql(entry.sql, RECIPES_SQL_POLICY)).ok, true, 'the guard let it through; the database stopped it');
      } else if ('affected' in expect) {
        assert.equal(result.status, 'success', JSON.stringify(result));
        assert.equal((result as { rows_affected: number }).rows_affected, expect.affected);
      } else {
        assert.equal(result.status, 'success', JSON.stringify(result));
        const rows = (result as { rows: Record<string, unknown>[] }).rows;
        assert.ok(rows.length <= 50);
        if (expect.ids) assert.deepEqual(rows.map((row) => row.id).sort(), [...expect.ids].sort());
        if (expect.count !== undefined) assert.equal(rows.length, expect.count);
        if (expect.n !== undefined) assert.equal(rows[0]!.n, expect.n);
      }
      // Other users' rows and deleted rows never change; nothing changes unless an UPDATE was expected to.
      assert.equal(await snapshot(`user_id <> 'alice' OR is_deleted`), othersBefore);
      if (!('affected' in expect && expect.affected > 0)) assert.equal(await snapshot(), before);
      else await resetFixture();
    });
  }
});

describe('generated WHERE clauses: the rewrite hides exactly the deleted rows, whatever the boolean shape', () => {
  before(resetFixture);

  const atom = fc.constantFrom(
    'is_deleted',
    'NOT is_deleted',
    'is_deleted IS TRUE',
    'is_deleted = false',
    'true',
    'false',
    "user_id = 'bob'",
    "user_id <> 'bob'",
    "name ILIKE '%o%'",
    `id = '${A4}'`,
    `id = '${B1}'`,
    `id = '${A1}'`,
    "recipe_type = 'cocktail'",
    'servings > 1',
    'prep_time IS NULL',
    "ingredients::text ILIKE '%bourbon%'",
  );
  const expression: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc.tuple(tie('expr'), fc.constantFrom('AND', 'OR'), tie('expr')).map(([a, op, b]) => `(${a} ${op} ${b})`),
      tie('expr').map((a) => `NOT (${a})`),
    ),
  })).expr;
  // the same predicate in several query shapes: plain, in a subquery, in a CTE, in a UNION arm, in a join
  const shape = fc.constantFrom(
    (w: string) => `SELECT id FROM saved_recipes WHERE ${w}`,
    (w: string) => `SELECT id FROM saved_recipes WHERE id IN (SELECT id FROM saved_recipes WHERE ${w})`,
    (w: string) => `WITH c AS (SELECT * FROM saved_recipes WHERE ${w}) SELECT id FROM c`,
    (w: string) => `SELECT id FROM saved_recipes WHERE false UNION SELECT id FROM saved_recipes WHERE ${w}`,
    (w: string) =>
      `SELECT r.id FROM saved_recipes r JOIN saved_recipes s ON r.id = s.id WHERE ${w.replace(/\b(is_deleted|user_id|name|id|recipe_type|servings|prep_time|ingredients)\b/g, 's.$1')}`,
  );

  test('alice gets exactly her live rows that satisfy it', async () => {
    await fc.assert(
      fc.asyncProperty(expression, shape, async (where, make) => {
        const result = await run(make(where));
        assert.equal(result.status, 'success', JSON.stringify(result));
        // the truth, computed by the superuser over alice's live rows with the predicate as written
        const truth = await admin.query(`SELECT id FROM saved_recipes WHERE user_id = 'alice' AND NOT is_deleted AND (${where})`);
        const got = [...new Set(result.rows.map((row: { id: string }) => row.id))].sort();
        assert.deepEqual(got, truth.rows.map((row) => row.id).sort(), make(where));
      }),
      { numRuns: 150, seed: 7 },
    );
  });
});

describe('the guard rewrites, as the issue says', () => {
  test('WHERE a OR b becomes (a OR b) AND NOT is_deleted', async () => {
    const guarded = await guardSql("SELECT id FROM saved_recipes WHERE name = 'a' OR name = 'b'", RECIPES_SQL_POLICY);
    assert.deepEqual(guarded, {
      ok: true,
      kind: 'select',
      sql: "SELECT id FROM saved_recipes WHERE (name = 'a' OR name = 'b') AND NOT (saved_recipes.is_deleted)",
    });
  });

  test('a larger LIMIT is lowered to 50, a smaller one kept, none added', async () => {
    assert.match(((await guardSql('SELECT id FROM saved_recipes LIMIT 500', RECIPES_SQL_POLICY)) as { sql: string }).sql, /LIMIT 50$/);
    assert.match(((await guardSql('SELECT id FROM saved_recipes LIMIT 5', RECIPES_SQL_POLICY)) as { sql: string }).sql, /LIMIT 5$/);
    assert.doesNotMatch(((await guardSql('SELECT id FROM saved_recipes', RECIPES_SQL_POLICY)) as { sql: string }).sql, /LIMIT/);
  });

  test('a table inside a join is replaced by its live rows', async () => {
    const guarded = (await guardSql('SELECT a.id FROM saved_recipes a LEFT JOIN saved_recipes b ON a.id = b.id', RECIPES_SQL_POLICY)) as {
      sql: string;
    };
    assert.equal(
      guarded.sql,
      'SELECT a.id FROM ( SELECT * FROM saved_recipes WHERE NOT (is_deleted) ) AS a LEFT JOIN ( SELECT * FROM saved_recipes WHERE NOT (is_deleted) ) AS b ON a.id = b.id',
    );
  });

  test('an UPDATE target is not filtered, so a deleted recipe can be restored', async () => {
    const guarded = (await guardSql(`UPDATE saved_recipes SET is_deleted = false WHERE id = '${A4}'`, RECIPES_SQL_POLICY)) as {
      sql: string;
    };
    assert.equal(guarded.sql, `UPDATE saved_recipes SET is_deleted = false WHERE id = '${A4}'`);
  });
});

describe("the seeds' legitimate queries", () => {
  before(resetFixture);

  const names = (result: any) => {
    assert.equal(result.status, 'success', JSON.stringify(result));
    return (result as { rows: { name: string }[] }).rows.map((row) => row.name).sort();
  };

  test('the documented queries: search by ingredient, list, get one (deleted and foreign rows hidden)', async () => {
    assert.deepEqual(names(await run("SELECT id, name, recipe_type, tags FROM saved_recipes WHERE ingredients::text ILIKE '%bourbon%'")), [
      'Old Fashioned',
    ]);
    const listed = await run('SELECT id, name, recipe_type, tags FROM saved_recipes');
    assert.deepEqual(names(listed), ['Manhattan', 'Old Fashioned', 'Tiramisu']);
    assert.equal((listed as { count: number }).count, 3);
    assert.deepEqual((listed as { rows: { tags: string[] }[] }).rows.find((row) => row.tags.includes('italian'))?.tags, ['italian']);
    const one = await run(`SELECT * FROM saved_recipes WHERE id = '${A1}'`);
    const row = (one as { rows: Record<string, unknown>[] }).rows[0]!;
    assert.equal(row.name, 'Old Fashioned');
    assert.equal(row.prep_time, 5);
    assert.deepEqual((row.ingredients as { name: string }[])[0], { name: 'bourbon', quantity: '2', unit: 'oz' });
    assert.equal(typeof row.created_at, 'string');
  });

  test('the documented writes: update servings, soft delete, restore', async () => {
    assert.deepEqual(await run(`UPDATE saved_recipes SET servings = 4 WHERE id = '${A1}'`), {
      status: 'success',
      rows_affected: 1,
      message: 'Changed 1 recipe.',
    });
    assert.equal((await admin.query('SELECT servings FROM saved_recipes WHERE id = $1', [A1])).rows[0].servings, 4);

    assert.equal(
      ((await run(`UPDATE saved_recipes SET is_deleted = true WHERE id = '${A2}'`)) as { rows_affected: number }).rows_affected,
      1,
    );
    assert.deepEqual(names(await run('SELECT name FROM saved_recipes')), ['Old Fashioned', 'Tiramisu']);
    assert.equal(((await run(`SELECT * FROM saved_recipes WHERE id = '${A2}'`)) as { count: number }).count, 0);

    assert.equal(
      ((await run(`UPDATE saved_recipes SET is_deleted = false WHERE id = '${A2}'`)) as { rows_affected: number }).rows_affected,
      1,
    );
    assert.deepEqual(names(await run('SELECT name FROM saved_recipes')), ['Manhattan', 'Old Fashioned', 'Tiramisu']);
    // restoring a recipe deleted long ago works by name too: an UPDATE's target sees deleted rows
    assert.equal(
      ((await run("UPDATE saved_recipes SET is_deleted = false WHERE name = 'Mint Julep'")) as { rows_affected: number }).rows_affected,
      1,
    );
    assert.ok(names(await run('SELECT name FROM saved_recipes')).includes('Mint Julep'));
    await resetFixture();
  });

  test('refused writes: DROP, TRUNCATE, a hard DELETE, an UPDATE without WHERE', async () => {
    for (const [sql, pattern] of [
      ['DROP TABLE saved_recipes;', /DROP is not allowed/],
      ['TRUNCATE saved_recipes;', /TRUNCATE is not allowed/],
      [`DELETE FROM saved_recipes WHERE id = '${A1}';`, /use|soft-delete it: UPDATE saved_recipes SET is_deleted = true WHERE id = '<id>'/],
      ['UPDATE saved_recipes SET servings = 4;', /UPDATE needs a WHERE clause/],
    ] as const) {
      const result = await run(sql);
      assert.equal(result.status, 'error');
      assert.match((result as { error: string }).error, pattern);
    }
  });

  test('SQLite habits a model brings, adapted to PostgreSQL: booleans, ::text for JSON, real column names', async () => {
    assert.deepEqual(names(await run('SELECT name, recipe_type FROM saved_recipes WHERE is_deleted = false')), [
      'Manhattan',
      'Old Fashioned',
      'Tiramisu',
    ]);
    assert.deepEqual(names(await run("SELECT name FROM saved_recipes WHERE ingredients::text LIKE '%bourbon%'")), ['Old Fashioned']);
    assert.equal(
      ((await run("UPDATE saved_recipes SET user_notes = 'My favorite!' WHERE name = 'Manhattan'")) as { rows_affected: number })
        .rows_affected,
      1,
    );
    assert.equal((await admin.query('SELECT user_notes FROM saved_recipes WHERE id = $1', [A2])).rows[0].user_notes, 'My favorite!');
    assert.equal(
      ((await run("UPDATE saved_recipes SET is_deleted = true WHERE name = 'Old Fashioned'")) as { rows_affected: number }).rows_affected,
      1,
    );
    await resetFixture();
  });

  test('literal SQLite-isms give clear errors', async () => {
    const cases: [string, RegExp][] = [
      [
        'SELECT name, recipe_type FROM saved_recipes WHERE is_deleted = 0',
        /is_deleted is a boolean in PostgreSQL: compare it with true or false, not 1 or 0/,
      ],
      [
        "UPDATE saved_recipes SET is_deleted = 1 WHERE name = 'Old Fashioned'",
        /is_deleted is a boolean in PostgreSQL: set it to true or false, not 1 or 0/,
      ],
      ["SELECT name FROM saved_recipes WHERE ingredients LIKE '%bourbon%'", /^Query failed: operator does not exist: jsonb ~~ unknown/],
      ['SELECT name, prep_time_minutes FROM saved_recipes', /^Query failed: column "prep_time_minutes" does not exist/],
    ];
    for (const [sql, pattern] of cases) {
      const result = await run(sql);
      assert.equal(result.status, 'error', sql);
      assert.match((result as { error: string }).error, pattern);
      // no internals: no position, no internal query, no file or line of PostgreSQL's source
      assert.doesNotMatch((result as { error: string }).error, /position|\.c:|internal/i);
    }
  });
});

describe('UPDATE limits, restore and immutable columns', () => {
  before(resetFixture);

  test('an UPDATE of more than one row rolls back with a clear error', async () => {
    const before = await snapshot();
    const result = await run("UPDATE saved_recipes SET servings = 2 WHERE recipe_type = 'cocktail'");
    assert.deepEqual(result, {
      status: 'error',
      error:
        "Query blocked: this UPDATE would change 3 rows, and an UPDATE may change 1 at most. Nothing was changed. Narrow the WHERE clause to one recipe, for example WHERE id = '<id>'.",
      query: "UPDATE saved_recipes SET servings = 2 WHERE recipe_type = 'cocktail'",
    });
    assert.equal(await snapshot(), before);
  });

  test('a recipe can be deleted and restored; its other columns stay as they were', async () => {
    const before = await snapshot(`id = '${A3}'`);
    await run(`UPDATE saved_recipes SET is_deleted = true WHERE id = '${A3}'`);
    assert.equal((await admin.query('SELECT is_deleted FROM saved_recipes WHERE id = $1', [A3])).rows[0].is_deleted, true);
    await run(`UPDATE saved_recipes SET is_deleted = false WHERE id = '${A3}'`);
    assert.equal(await snapshot(`id = '${A3}'`), before);
  });

  test('JSON columns can be edited in place', async () => {
    const result = await run(`UPDATE saved_recipes SET tags = tags || '["favourite"]'::jsonb WHERE id = '${A1}'`);
    assert.equal((result as { rows_affected: number }).rows_affected, 1);
    assert.deepEqual((await admin.query('SELECT tags FROM saved_recipes WHERE id = $1', [A1])).rows[0].tags, [
      'classic',
      'whiskey',
      'favourite',
    ]);
    await resetFixture();
  });

  test('an UPDATE commits with the transaction that records the call, and rolls back with it', async () => {
    await assert.rejects(
      asUser(pool, 'alice', async (db) => {
        await tool({ query: `UPDATE saved_recipes SET servings = 9 WHERE id = '${A1}'` }, context(db, 'alice'));
        throw new Error('recording the call failed');
      }),
      /recording the call failed/,
    );
    assert.equal((await admin.query('SELECT servings FROM saved_recipes WHERE id = $1', [A1])).rows[0].servings, 1);
  });
});

describe('the database is the first guard: the role on its own, without the parser', () => {
  before(resetFixture);

  /** Runs raw SQL as brigade_recipes_sql for a user, the way the executor sets it up, but unguarded. */
  async function asSqlRole(userId: string, sql: string): Promise<pg.QueryResult> {
    return asUser(pool, userId, async (db) => {
      await db.query(SEAL_IDENTITY);
      await db.query(`SET LOCAL ROLE ${RECIPES_SQL_ROLE}`);
      return db.query(sql);
    });
  }

  test("row-level security: only the user's rows, deleted ones included (the guard hides those)", async () => {
    const { rows } = await asSqlRole('alice', 'SELECT id FROM saved_recipes ORDER BY id');
    assert.deepEqual(
      rows.map((row) => row.id),
      [A1, A2, A3, A4],
    );
    const none = await asSqlRole('alice', `UPDATE saved_recipes SET notes = 'x' WHERE id IN ('${B1}', '${B2}')`);
    assert.equal(none.rowCount, 0);
  });

  test('no other table, no INSERT or DELETE, no change of id, owner, creation time or conversation', async () => {
    const refusals = [
      'SELECT * FROM customers',
      'SELECT * FROM conversations',
      "INSERT INTO saved_recipes (id, user_id, name, recipe_type) VALUES (gen_random_uuid(), 'alice', 'x', 'food')",
      `DELETE FROM saved_recipes WHERE id = '${A1}'`,
      `UPDATE saved_recipes SET user_id = 'bob' WHERE id = '${A1}'`,
      `UPDATE saved_recipes SET id = gen_random_uuid() WHERE id = '${A1}'`,
      `UPDATE saved_recipes SET created_at = now() WHERE id = '${A1}'`,
      `UPDATE saved_recipes SET conversation_id = NULL WHERE id = '${A1}'`,
      "SELECT pg_read_file('/etc/passwd')",
      "COPY saved_recipes TO '/tmp/recipes.csv'",
      'TRUNCATE saved_recipes',
      'CREATE TABLE loot (x int)',
    ];
    for (const sql of refusals) {
      await assert.rejects(asSqlRole('alice', sql), (error: { code?: string }) => ['42501', '0A000'].includes(error.code ?? ''), sql);
    }
  });

  test("brigade_app does not inherit the role's UPDATE right", async () => {
    await assert.rejects(
      asUser(pool, 'alice', (db) => db.query(`UPDATE saved_recipes SET notes = 'x' WHERE id = '${A1}'`)),
      (error: { code?: string }) => error.code === '42501',
    );
  });
});

describe("the save pipeline's insert, as brigade_app", () => {
  test('inserts for its user once (ON CONFLICT (id) DO NOTHING), never for another user', async () => {
    const id = randomUUID();
    const content = RecipeContent.parse({
      name: 'Negroni',
      recipe_type: 'cocktail',
      ingredients: [{ name: 'gin', quantity: '1', unit: 'oz' }],
      instructions: ['Stir with ice'],
      prep_time: 3,
      servings: 1,
    });
    const insert = (userId: string) =>
      asUser(pool, userId, (db) =>
        db.query(
          `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, cook_time, servings, source_references, notes, tags)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING`,
          [
            id,
            userId,
            content.name,
            content.recipe_type,
            JSON.stringify(content.ingredients),
            JSON.stringify(content.instructions),
            content.prep_time,
            content.cook_time ?? null,
            content.servings,
            JSON.stringify(content.source_references),
            content.notes ?? null,
            JSON.stringify(content.tags),
          ],
        ),
      );
    assert.equal((await insert('alice')).rowCount, 1);
    assert.equal((await insert('alice')).rowCount, 0, 'a retried insert is a no-op');
    await assert.rejects(
      asUser(pool, 'alice', (db) =>
        db.query(`INSERT INTO saved_recipes (id, user_id, name, recipe_type) VALUES ($1, 'bob', 'x', 'food')`, [randomUUID()]),
      ),
      /row-level security/,
    );
    const stored = (await admin.query('SELECT * FROM saved_recipes WHERE id = $1', [id])).rows[0];
    assert.equal(stored.user_id, 'alice');
    assert.equal(stored.is_deleted, false);
    assert.deepEqual(stored.tags, []);
    await resetFixture();
  });
});

describe('statement_timeout', () => {
  test('pg_sleep is refused by the parser, and a heavy query is cut by the timeout', async () => {
    const sleep = await run('SELECT pg_sleep(5)');
    assert.match((sleep as { error: string }).error, /^Query blocked: the function pg_sleep\(\) is not allowed/);

    const started = Date.now();
    // 4,000 values joined three ways: 6.4e10 rows, whatever the user's recipes
    const query = `WITH x AS (SELECT unnest(string_to_array('${','.repeat(4_000)}', ',')) AS v) SELECT count(*) FROM x a, x b, x c`;
    const heavy = await run(query);
    const took = Date.now() - started;
    assert.deepEqual(heavy, {
      status: 'error',
      error: `Query failed: it ran longer than ${TIMEOUT_MS} ms and was cancelled`,
      query,
    });
    assert.ok(took >= TIMEOUT_MS && took < TIMEOUT_MS + 3000, `took ${took} ms`);
  });
});

describe('at most 50 rows', () => {
  test('a SELECT stops at 50 rows and says there are more', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `('${randomUUID()}', 'carol', 'Recipe ${i}', 'food')`).join(', ');
    await admin.query(`INSERT INTO saved_recipes (id, user_id, name, recipe_type) VALUES ${many}`);
    const result = await run('SELECT id, name FROM saved_recipes', 'carol');
    assert.equal(result.status, 'success');
    assert.equal((result as { count: number }).count, 50);
    assert.equal((result as { rows: unknown[] }).rows.length, 50);
    assert.match((result as { message: string }).message, /first 50 rows; there are more/);
    const limited = await run('SELECT id FROM saved_recipes LIMIT 7', 'carol');
    assert.equal((limited as { count: number }).count, 7);
    assert.equal((limited as { message?: string }).message, undefined);
  });
});

test('a result larger than the limit is an error, not a transcript entry', async () => {
  await resetFixture();
  const guarded = await guardSql('SELECT * FROM saved_recipes', RECIPES_SQL_POLICY);
  assert.ok(guarded.ok);
  const result = await asUser(pool, 'alice', (db) =>
    executeGuarded(db, guarded, {
      role: RECIPES_SQL_ROLE,
      userId: 'alice',
      statementTimeoutMs: 5000,
      maxRows: 50,
      maxUpdatedRows: 1,
      maxResultChars: 1024,
    }),
  );
  assert.equal(result.status, 'error');
  assert.equal(
    (result as { error: string }).error,
    'Query failed: the result is larger than the 1 KB allowed; select fewer columns or rows',
  );
});

describe('another policy (how the beer agent reuses the guard): read-only, its own tables and limit', () => {
  const readOnly: SqlPolicy = { ...RECIPES_SQL_POLICY, statements: ['select'], tables: { saved_recipes: {} }, maxRows: 2, hints: {} };

  test('UPDATE and DELETE are refused plainly; no soft-delete filter; its own row limit', async () => {
    assert.deepEqual(await guardSql(`UPDATE saved_recipes SET notes = 'x' WHERE id = '${A1}'`, readOnly), {
      ok: false,
      error: 'Query blocked: UPDATE is not allowed; only SELECT on saved_recipes is allowed',
    });
    assert.match(
      ((await guardSql('DELETE FROM saved_recipes', readOnly)) as { error: string }).error,
      /DELETE is not allowed; only SELECT on saved_recipes is allowed/,
    );
    assert.deepEqual(await guardSql('SELECT id FROM saved_recipes WHERE is_deleted LIMIT 10', readOnly), {
      ok: true,
      kind: 'select',
      sql: 'SELECT id FROM saved_recipes WHERE is_deleted LIMIT 2',
    });
  });

  test('its own transaction is READ ONLY: even an UPDATE that got there could not write', async () => {
    await resetFixture();
    const options = { role: RECIPES_SQL_ROLE, userId: 'alice', statementTimeoutMs: 5000, maxRows: 2, maxUpdatedRows: 1, readOnly: true };
    const select = await guardSql('SELECT id FROM saved_recipes ORDER BY id', readOnly);
    assert.ok(select.ok);
    assert.deepEqual(await executeGuardedAlone(pool, select, options), {
      status: 'success',
      rows: [{ id: A1 }, { id: A2 }],
      count: 2,
      truncated: true,
    });
    const update = await guardSql(`UPDATE saved_recipes SET notes = 'x' WHERE id = '${A1}'`, RECIPES_SQL_POLICY);
    assert.ok(update.ok);
    assert.deepEqual(await executeGuardedAlone(pool, update, options), {
      status: 'error',
      error: 'Query failed: cannot execute UPDATE in a read-only transaction',
    });
    assert.equal((await admin.query('SELECT notes FROM saved_recipes WHERE id = $1', [A1])).rows[0].notes, null);
  });
});

test('every fixture id is distinct (the corpus relies on it)', () => {
  assert.equal(new Set([A1, A2, A3, A4, B1, B2]).size, 6);
  assert.deepEqual(ALICE_LIVE, [A1, A2, A3]);
});
