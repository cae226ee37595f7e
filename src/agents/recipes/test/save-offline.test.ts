// Without GEMINI_API_KEY the recipes agent saves a recipe end to end: the offline model turns the phrasing of
// docs/agents/recipes.md into save_recipe, the approval opens, and the pipeline runs on the offline tasks (a parser, an
// image prompt, a generated PNG) into the local folder that the API serves.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../../../../stack/ports.ts';
import { OLD_FASHIONED, adminQuery, fetchPng } from '../../../../test/support/recipes.ts';
import { type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let app: TestApp;
let dataDir: string;

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-recipes-offline-'));
  app = await startTestApp({ apiPort: await freePort(), env: { DATA_DIR: dataDir } });
});
after(async () => {
  await app?.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

test('offline: "save this recipe: ..." asks for approval, then saves the parsed recipe with a generated PNG', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'recipes' } });
  assert.equal(created.status, 201);
  const id = created.body.id;

  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: `save this recipe: ${OLD_FASHIONED}` } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  const [pending] = turn.body.pending;
  assert.equal(pending.tool, 'save_recipe');
  assert.deepEqual(pending.args, { raw_recipe_data: OLD_FASHIONED });
  assert.equal(turn.body.messages.at(-1).text, '', "the call is the reply: its words are the client's");

  const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: pending.id, decision: 'approve' } });
  assert.equal(decided.status, 200, JSON.stringify(decided.body));
  const tool = decided.body.messages.find((message: any) => message.role === 'tool');
  assert.equal(tool.result.status, 'saved', JSON.stringify(tool.result));
  assert.equal(tool.result.recipe_name, 'Old Fashioned');
  const [card] = tool.cards;
  assert.deepEqual(
    { ...card, image_url: undefined },
    {
      type: 'recipe_card',
      recipe_id: tool.result.recipe_id,
      recipe_name: 'Old Fashioned',
      recipe_type: 'cocktail',
      prep_time: 5,
      servings: 1,
      image_url: undefined,
      status: 'saved',
      actions: ['delete', 'modify'],
    },
  );
  assert.equal(card.image_url, tool.result.image_url);
  assert.equal(tool.result.image_url, `${app.baseUrl}/files/recipes/${tool.result.recipe_id}.png`);

  const answer = decided.body.messages.at(-1);
  assert.equal(answer.role, 'assistant');
  assert.equal(answer.text, "Saved 'Old Fashioned' to your collection, with its image.");

  const png = await fetchPng(tool.result.image_url);
  assert.ok(png.length > 50);
  // the folder holds the published image only (the staged copy is removed)
  assert.deepEqual(await fs.readdir(path.join(dataDir, 'objects', 'recipes')), [`${tool.result.recipe_id}.png`]);

  const rows = await adminQuery(app.adminUrl, 'SELECT * FROM saved_recipes');
  assert.equal(rows.length, 1);
  const row = rows[0];
  assert.equal(row.id, tool.result.recipe_id);
  assert.equal(row.user_id, 'alice');
  assert.equal(row.conversation_id, id);
  assert.equal(row.name, 'Old Fashioned');
  assert.equal(row.recipe_type, 'cocktail');
  assert.deepEqual(
    row.ingredients.map((item: any) => [item.quantity, item.unit, item.name]),
    [
      ['2', 'oz', 'bourbon'],
      ['1', null, 'sugar cube'],
      ['2', 'dashes', 'Angostura bitters'],
      [null, null, 'orange peel'],
    ],
  );
  assert.deepEqual(row.instructions, ['Muddle sugar with bitters', 'Add bourbon and ice', 'Stir', 'Garnish with orange peel']);
  assert.equal(row.prep_time, 5);
  assert.equal(row.servings, 1);
  assert.equal(row.image_url, tool.result.image_url);

  // the child workflow has the readable ID
  const child = await app.client.workflow.getHandle(`save-recipe-${tool.result.recipe_id}`).describe();
  assert.equal(child.type, 'saveRecipe');
  assert.equal(child.status.name, 'COMPLETED');

  // The image may be deleted with its recipe, so browsers revalidate it rather than keep it for good, and
  // a soft-deleted recipe's image stops being served (it comes back with the recipe).
  const served = await fetch(tool.result.image_url);
  assert.equal(served.status, 200);
  assert.equal(served.headers.get('cache-control'), 'no-cache');
  await served.arrayBuffer();
  await adminQuery(app.adminUrl, 'UPDATE saved_recipes SET is_deleted = true WHERE id = $1', [tool.result.recipe_id]);
  assert.equal((await fetch(tool.result.image_url)).status, 404, "a deleted recipe's image is not served");
  await adminQuery(app.adminUrl, 'UPDATE saved_recipes SET is_deleted = false WHERE id = $1', [tool.result.recipe_id]);
  assert.equal((await fetch(tool.result.image_url)).status, 200, 'a restored recipe shows its image again');
});

test('the files route: unknown and malformed names are 404, no bearer needed', async () => {
  const missing = await fetch(`${app.baseUrl}/files/recipes/00000000-0000-4000-8000-000000000000.png`);
  assert.equal(missing.status, 404);
  const traversal = await fetch(`${app.baseUrl}/files/recipes/..%2F..%2Fdev-token`);
  assert.equal(traversal.status, 404);
});
