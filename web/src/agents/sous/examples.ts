// What an empty sous conversation offers as a first message: phrasings that fit the recipe beside it (a swap of
// an ingredient it has, its servings scaled, one of its ingredients left out, a note), so that a cocktail is not
// offered "remove the parmesan". The offline model understands each of them too.
import { ingredientName, mentionsTerm } from '../../../../src/agents/sous/words.ts';
import type { SousRecipe } from './sousView.ts';

/** Common swaps: the one for the recipe's first ingredient that has one is offered. */
const SWAPS: readonly (readonly [string, string])[] = [
  ['butter', 'olive oil'],
  ['milk', 'oat milk'],
  ['cream', 'yogurt'],
  ['sugar', 'honey'],
  ['bourbon', 'rye'],
  ['parmesan', 'pecorino'],
  ['chicken', 'tofu'],
];

/** None until the recipe is known: the demo recipe's would not fit the one the person chose. */
export function sousExamples(recipe: SousRecipe | undefined): string[] {
  const ingredients = recipe?.ingredients ?? [];
  if (!ingredients.length) return [];
  const swap = ingredients.map((ingredient) => SWAPS.find(([from]) => mentionsTerm(ingredient.text, from))).find(Boolean);
  // the last ingredient is the likeliest to be optional (a garnish, a pinch of salt) and never the whole recipe
  const leftOut = ingredients.length > 1 ? ingredientName(ingredients.at(-1)!.text) : undefined;
  return [
    ...(swap ? [`swap ${swap[0]} for ${swap[1]}`] : []),
    `make it for ${recipe?.servings === 4 ? 2 : 4}`,
    ...(leftOut ? [`remove the ${leftOut}`] : []),
    'add a note: taste before serving',
  ];
}
