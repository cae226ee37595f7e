// Saved recipes through the HTTP API (row-level security, filters, pagination) and execute_recipe_sql
// through a real recipes conversation on the offline model, against real Temporal and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import pg from 'pg';
import { A1, A2, A3, A4, B1, FIXTURE } from '../../../../test/support/sql-corpus.ts';
import { ALICE, BOB, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let app: TestApp;
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

before(async () => {
  app = await startTestApp();
  admin = new pg.Client({ connectionString: app.adminUrl });
  await admin.connect();
});
after(async () => {
  await admin?.end();
  await app?.stop();
});

const ids = (body: { recipes: { id: string }[] }) => body.recipes.map((recipe) => recipe.id);

describe('GET /v1/recipes', () => {
  beforeEach(resetFixture);

  test("the caller's own recipes, newest first, soft-deleted hidden", async () => {
    const alice = await app.call('GET', '/v1/recipes');
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    assert.deepEqual(ids(alice.body), [A3, A2, A1]);
    assert.equal(alice.body.nextCursor, null);
    const first = alice.body.recipes[2];
    assert.equal(first.name, 'Old Fashioned');
    assert.equal(first.user_id, 'alice');
    assert.deepEqual(first.ingredients[0], { name: 'bourbon', quantity: '2', unit: 'oz' });
    assert.equal(first.created_at, '2026-01-01T10:00:00.000Z');
    assert.equal(first.is_deleted, false);

    const bob = await app.call('GET', '/v1/recipes', { token: BOB });
    assert.deepEqual(ids(bob.body), [B1]);
  });

  test('deleted=true includes soft-deleted recipes', async () => {
    const all = await app.call('GET', '/v1/recipes?deleted=true');
    assert.deepEqual(ids(all.body), [A4, A3, A2, A1]);
    assert.equal(all.body.recipes[0].is_deleted, true);
  });

  test('filters: type, and q over the name or any ingredient name', async () => {
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes?type=dessert')).body), [A3]);
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes?q=BOURBON')).body), [A1]);
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes?q=bourbon&deleted=true')).body), [A4, A1]);
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes?q=manhat')).body), [A2]);
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes?q=%25')).body), [], 'LIKE wildcards in q match themselves');
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes?type=cocktail&q=whiskey')).body), [A2]);
  });

  test('pagination by cursor: every recipe once, in order', async () => {
    const page1 = await app.call('GET', '/v1/recipes?limit=2&deleted=true');
    assert.deepEqual(ids(page1.body), [A4, A3]);
    assert.equal(typeof page1.body.nextCursor, 'string');
    const page2 = await app.call('GET', `/v1/recipes?limit=2&deleted=true&cursor=${page1.body.nextCursor}`);
    assert.deepEqual(ids(page2.body), [A2, A1]);
    assert.equal(page2.body.nextCursor, null);
  });

  test('bad parameters are 400 and name the field', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['type=soup', 'type'],
      ['deleted=yes', 'deleted'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['q=', 'q'],
    ]) {
      const bad = await app.call('GET', `/v1/recipes?${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.fields[0].field, field, query);
    }
  });

  test('no token is 401', async () => {
    assert.equal((await app.call('GET', '/v1/recipes', { token: '' })).status, 401);
  });
});

describe('GET /v1/recipes/:id', () => {
  beforeEach(resetFixture);

  test('the recipe, and when it was last opened', async () => {
    const before = Date.now();
    const got = await app.call('GET', `/v1/recipes/${A1}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.id, A1);
    assert.deepEqual(got.body.instructions, FIXTURE[0]!.instructions);
    assert.ok(Date.parse(got.body.last_accessed_at) >= before - 1000);
  });

  test("another user's recipe and an unknown one are 404; a malformed id is 400", async () => {
    const touched = async () =>
      (await admin.query('SELECT last_accessed_at FROM saved_recipes WHERE id = $1', [B1])).rows[0].last_accessed_at.getTime();
    const bobsBefore = await touched();
    assert.equal((await app.call('GET', `/v1/recipes/${B1}`)).status, 404);
    assert.equal((await app.call('GET', `/v1/recipes/${A1}`, { token: BOB })).status, 404);
    const unknown = await app.call('GET', '/v1/recipes/00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'Recipe not found');
    const malformed = await app.call('GET', '/v1/recipes/not-a-uuid');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.fields[0].field, 'id');
    assert.equal(await touched(), bobsBefore, "another user's attempt leaves bob's recipe untouched");
  });

  test("a soft-deleted recipe is still the owner's to open", async () => {
    const got = await app.call('GET', `/v1/recipes/${A4}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.is_deleted, true);
  });

  test('the OpenAPI document describes both', async () => {
    const document = await app.call('GET', '/openapi.json', { token: '' });
    assert.ok(document.body.paths['/v1/recipes'].get);
    assert.ok(document.body.paths['/v1/recipes/{id}'].get);
    assert.deepEqual(
      document.body.paths['/v1/recipes'].get.parameters.map((p: { name: string }) => p.name),
      ['type', 'q', 'deleted', 'limit', 'cursor'],
    );
    assert.ok(document.body.components.schemas.Recipe.properties.ingredients);
  });
});

describe('execute_recipe_sql in a recipes conversation, on the offline model', () => {
  before(resetFixture);

  async function conversation(token = ALICE): Promise<string> {
    const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'recipes' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.id;
  }
  const say = async (id: string, text: string, token = ALICE) => {
    const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const tool = turn.body.messages.find((m: { role: string }) => m.role === 'tool');
    const reply = turn.body.messages.at(-1);
    assert.equal(reply.role, 'assistant');
    assert.notEqual(reply.text, '', 'the offline model reads the result aloud');
    return { tool, reply: reply.text as string };
  };

  test('"list my recipes" lists only the caller\'s live recipes', async () => {
    const id = await conversation();
    const { tool, reply } = await say(id, 'list my recipes');
    assert.equal(tool.tool, 'execute_recipe_sql');
    assert.equal(tool.result.status, 'success');
    assert.deepEqual(
      tool.result.rows.map((row: { id: string }) => row.id),
      [A3, A2, A1],
    );
    assert.match(reply, /3 recipes: Tiramisu \(dessert, 30 min prep, serves 8\); /);
    assert.doesNotMatch(reply, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'a person reads names, not ids');
    assert.doesNotMatch(reply, /Mint Julep|Bob/);

    const bob = await conversation(BOB);
    const bobs = await say(bob, 'list my recipes', BOB);
    assert.match(bobs.reply, /1 recipe: Bob's Bourbon Sour/);
  });

  test('"find recipes with bourbon", "run sql: ...", delete and restore', async () => {
    const id = await conversation();
    assert.match((await say(id, 'find recipes with bourbon')).reply, /1 recipe: Old Fashioned/);
    const sql = await say(id, "run sql: SELECT name, servings FROM saved_recipes WHERE recipe_type = 'dessert'");
    assert.deepEqual(sql.tool.result, { status: 'success', rows: [{ name: 'Tiramisu', servings: 8 }], count: 1 });

    const deleted = await say(id, `delete recipe ${A2}`);
    assert.deepEqual(deleted.tool.args, { query: `UPDATE saved_recipes SET is_deleted = true WHERE id = '${A2}'` });
    assert.match(deleted.reply, /Changed 1 recipe/);
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes')).body), [A3, A1]);
    await say(id, `restore recipe ${A2}`);
    assert.deepEqual(ids((await app.call('GET', '/v1/recipes')).body), [A3, A2, A1]);

    const servings = await say(id, `set servings of ${A1} to 4`);
    assert.match(servings.reply, /Changed 1 recipe/);
    assert.equal((await app.call('GET', `/v1/recipes/${A1}`)).body.servings, 4);

    const shown = await say(id, `show recipe ${A1}`);
    assert.match(
      shown.reply,
      /Old Fashioned \(cocktail, 5 min prep, serves 4\).*Ingredients: 2 oz bourbon, 1 sugar cube.*Steps: 1\) Muddle/,
    );
  });

  test('a refused query is recorded as its error result, and the reply explains it', async () => {
    const id = await conversation();
    const { tool, reply } = await say(id, `run sql: DELETE FROM saved_recipes WHERE id = '${A1}'`);
    assert.equal(tool.result.status, 'error');
    assert.match(reply, /That did not work: Query blocked: DELETE is not allowed\. To delete a recipe, soft-delete it/);
    const failed = await say(id, 'run sql: SELECT nope FROM saved_recipes');
    assert.match(failed.reply, /Query failed: column "nope" does not exist/);
    // the turn goes on: the next query in the same conversation works
    assert.match((await say(id, 'list my desserts')).reply, /1 recipe: Tiramisu/);
  });
});
