// A recipe save's approval shows the recipe as it will be saved (agentHome.ts ToolWords.approval): its name,
// the ingredients as a list and the steps in order, from the item's `preview` (read from the raw text by the
// server), not the raw paragraph. Without a preview the arguments stay.
import type { ReactNode } from 'react';
import { plural } from '../../plural';
import { type Row as Args, isObject } from '../../resultParts';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const count = (v: unknown): number => (typeof v === 'number' && v > 0 ? v : 0);

const recipeOf = (preview: Args | undefined): Args | undefined => (isObject(preview?.recipe) ? preview.recipe : undefined);

export function saveApproval(_args: Args, preview: Args | undefined): ReactNode | undefined {
  const recipe = recipeOf(preview);
  if (!recipe) return undefined;
  const name = typeof recipe.name === 'string' ? recipe.name : 'Recipe';
  const ingredients = strings(recipe.ingredients);
  const steps = strings(recipe.steps);
  const facts = [
    typeof recipe.type === 'string' ? recipe.type[0]!.toUpperCase() + recipe.type.slice(1) : '',
    count(recipe.servings) ? `serves ${count(recipe.servings)}` : '',
    count(recipe.prepMinutes) ? `${count(recipe.prepMinutes)} min prep` : '',
    count(recipe.cookMinutes) ? `${count(recipe.cookMinutes)} min cooking` : '',
  ].filter(Boolean);
  return (
    <section className="approval-preview recipe-preview" aria-label={`Recipe to save: ${name}`}>
      <h3>{name}</h3>
      {facts.length > 0 && <p className="muted">{facts.join(' · ')}</p>}
      <h4>Ingredients</h4>
      {ingredients.length ? (
        <ul aria-label="Ingredients">
          {ingredients.map((item, i) => (
            <li key={i}>{item}</li>
          ))}
          {count(recipe.moreIngredients) > 0 && <li className="muted">and {plural(count(recipe.moreIngredients), 'more ingredient')}</li>}
        </ul>
      ) : (
        <p className="muted">None found in the text.</p>
      )}
      <h4>Steps</h4>
      {steps.length ? (
        <ol aria-label="Steps">
          {steps.map((step, i) => (
            <li key={i}>{step}</li>
          ))}
          {count(recipe.moreSteps) > 0 && <li className="muted">and {plural(count(recipe.moreSteps), 'more step')}</li>}
        </ol>
      ) : (
        <p className="muted">None found in the text.</p>
      )}
    </section>
  );
}

export function saveApproved(_args: Args, preview: Args | undefined): string | undefined {
  const recipe = recipeOf(preview);
  if (!recipe) return undefined;
  const ingredients = strings(recipe.ingredients).length + count(recipe.moreIngredients);
  const steps = strings(recipe.steps).length + count(recipe.moreSteps);
  return `${String(recipe.name ?? 'the recipe')}, ${plural(ingredients, 'ingredient')} and ${plural(steps, 'step')}`;
}
