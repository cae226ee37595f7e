// What an empty sous conversation offers (web/src/agents/sous/examples.ts): phrasings fitted to the recipe beside
// it, none before it is known.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sousExamples } from '../../web/src/agents/sous/examples.ts';

const recipe = (servings: number, ...texts: string[]) => ({ servings, ingredients: texts.map((text, i) => ({ id: `i${i + 1}`, text })) });

test('the demo spaghetti is offered its butter swapped, twice the servings, its salt left out and a note', () => {
  assert.deepEqual(sousExamples(recipe(2, '200 g spaghetti', '3 tbsp butter', '40 g parmesan, grated', '1 pinch salt')), [
    'swap butter for olive oil',
    'make it for 4',
    'remove the salt',
    'add a note: taste before serving',
  ]);
});

test('a cocktail is offered what fits it: its spirit swapped, its garnish left out, never the parmesan', () => {
  const examples = sousExamples(recipe(1, '2 oz bourbon', '1 sugar cube', '2 dashes Angostura bitters', 'orange peel'));
  assert.deepEqual(examples, ['swap bourbon for rye', 'make it for 4', 'remove the orange peel', 'add a note: taste before serving']);
});

test('a recipe for 4 is offered 2; one without a known swap gets none; before the recipe is known, nothing', () => {
  assert.deepEqual(sousExamples(recipe(4, '1 kg potatoes', '1 onion')), [
    'make it for 2',
    'remove the onion',
    'add a note: taste before serving',
  ]);
  assert.deepEqual(sousExamples(recipe(2, 'a bunch of basil')), ['make it for 4', 'add a note: taste before serving']);
  assert.deepEqual(sousExamples(undefined), []);
  assert.deepEqual(sousExamples({ servings: 2, ingredients: [] }), []);
});
