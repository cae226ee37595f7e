// The first messages an empty sous conversation offers (web/src/agents/sous/examples.ts) are ones the agent acts
// on: through the API on the offline model, each proposes a PatchSet, for the demo recipe and for a saved cocktail.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sousExamples } from '../../web/src/agents/sous/examples.ts';
import type { SousRecipe } from '../../web/src/agents/sous/sousView.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
const cocktail = randomUUID();

before(async () => {
  app = await startTestApp();
  await app.adminQuery(
    `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, servings, tags)
     VALUES ($1, 'alice', 'Old Fashioned', 'cocktail', $2::jsonb, $3::jsonb, 5, 1, '[]'::jsonb)`,
    [
      cocktail,
      JSON.stringify([
        { name: 'bourbon', quantity: '2', unit: 'oz', notes: null },
        { name: 'sugar cube', quantity: '1', unit: null, notes: null },
        { name: 'Angostura bitters', quantity: '2', unit: 'dashes', notes: null },
        { name: 'orange peel', quantity: null, unit: null, notes: null },
      ]),
      JSON.stringify(['Muddle the sugar with the bitters.', 'Add the bourbon and ice, and stir.', 'Garnish with the orange peel.']),
    ],
  );
});
after(async () => {
  await app?.stop();
});

async function open(recipeId?: string): Promise<{ id: string; recipe: SousRecipe }> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', ...(recipeId ? { recipeId } : {}) } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const view = await app.call('GET', `/v1/conversations/${created.body.id}`);
  return { id: created.body.id, recipe: view.body.recipe };
}

for (const [name, recipeId] of [
  ['the demo recipe', undefined],
  ['a saved Old Fashioned', cocktail],
] as const) {
  test(`every example offered for ${name} proposes a change`, async () => {
    const { recipe } = await open(recipeId);
    const examples = sousExamples(recipe);
    assert.ok(examples.length >= 3, JSON.stringify(examples));
    if (recipeId) assert.ok(!examples.some((example) => /parmesan|butter/.test(example)), JSON.stringify(examples));
    for (const example of examples) {
      const { id } = await open(recipeId);
      const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: example } });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.equal(turn.body.pending[0]?.kind, 'patchset', `"${example}": ${turn.body.messages.at(-1)?.text}`);
    }
  });
}
