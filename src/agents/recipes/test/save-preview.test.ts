// A save_recipe approval carries the recipe as it will be saved (PendingItem.preview, issue 46 item 3): a name, an
// ingredients list and steps read from the raw text, through the HTTP API on the offline model, whose save then
// stores the same ingredients and steps; a long recipe's preview shows its beginning and counts the rest.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OLD_FASHIONED } from '../../../../test/support/recipes.ts';
import { type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

async function saveApproval(raw: string) {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'recipes' } });
  assert.equal(created.status, 201);
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: `save this recipe: ${raw}` } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.pending[0].tool, 'save_recipe');
  return turn.body.pending[0];
}

test('a save approval shows the recipe as it will be saved: name, ingredients, steps', async () => {
  const item = await saveApproval(OLD_FASHIONED);
  assert.deepEqual(item.preview, {
    recipe: {
      name: 'Old Fashioned',
      type: 'cocktail',
      ingredients: ['2 oz bourbon', '1 sugar cube', '2 dashes Angostura bitters', 'orange peel'],
      steps: ['Muddle sugar with bitters', 'Add bourbon and ice', 'Stir', 'Garnish with orange peel'],
      prepMinutes: 5,
      servings: 1,
    },
  });
});

test("a long recipe's preview stays within its bound and counts what it leaves out", async () => {
  const ingredients = Array.from({ length: 40 }, (_, i) => `${i + 1} g spice number ${i + 1}`).join(', ');
  const steps = Array.from({ length: 30 }, (_, i) => `${i + 1}) Stir the pot for the ${i + 1}th time`).join(', ');
  const item = await saveApproval(`Big stew. Ingredients: ${ingredients}. Instructions: ${steps}. Serves: 8. Type: food.`);
  const recipe = item.preview.recipe;
  assert.equal(recipe.ingredients.length, 25);
  assert.equal(recipe.moreIngredients, 15);
  assert.equal(recipe.steps.length, 12);
  assert.equal(recipe.moreSteps, 18);
  assert.ok(Buffer.byteLength(JSON.stringify(item.preview)) <= 4096);
});
