// Patch Review Mode as data: every ingredient and step in its original place, marked added,
// modified (old and new text), removed (a ghost where it was) or unchanged; the notes; counts made here,
// not taken from the model; and the end state, which is exactly what accepting produces.
import { applyPatchSet } from './apply.ts';
import type { Impacted, ProposedPatchSet, Recipe, Review, ReviewIngredient, ReviewStep } from './schemas.ts';

export function buildReview(recipe: Recipe, patchSet: Pick<ProposedPatchSet, 'patches' | 'portions' | 'summary'>): Review {
  const endState = applyPatchSet(recipe, patchSet);
  const before = new Map(recipe.ingredients.map((i) => [i.id, i]));
  const after = new Map(endState.ingredients.map((i) => [i.id, i]));

  const ingredients: ReviewIngredient[] = recipe.ingredients.map((old) => {
    const now = after.get(old.id);
    if (!now) return { id: old.id, change: 'removed', text: old.text };
    if (now.text !== old.text) return { id: old.id, change: 'modified', text: now.text, oldText: old.text };
    return { id: old.id, change: 'unchanged', text: old.text };
  });
  for (const added of endState.ingredients) {
    if (!before.has(added.id)) ingredients.push({ id: added.id, change: 'added', text: added.text });
  }

  // Steps are never removed (no such operation), so the end state's order is the review's order.
  const oldSteps = new Map(recipe.steps.map((s) => [s.id, s]));
  const steps: ReviewStep[] = endState.steps.map((step) => {
    const old = oldSteps.get(step.id);
    if (!old) return { id: step.id, change: 'added', text: step.text, status: step.status };
    if (old.text !== step.text) return { id: step.id, change: 'modified', text: step.text, oldText: old.text, status: step.status };
    return { id: step.id, change: 'unchanged', text: step.text, status: step.status };
  });

  const count = (list: { change: string }[], change: string) => list.filter((item) => item.change === change).length;
  const impacted: Required<Impacted> = {
    ingredientsAdded: count(ingredients, 'added'),
    ingredientsModified: count(ingredients, 'modified'),
    ingredientsRemoved: count(ingredients, 'removed'),
    stepsAdded: count(steps, 'added'),
    stepsModified: count(steps, 'modified'),
    stepsRemoved: count(steps, 'removed'),
  };
  return {
    baseVersion: recipe.version,
    ingredients,
    steps,
    notes: endState.notes.slice(recipe.notes.length),
    summary: { ...patchSet.summary, impacted },
    endState,
  };
}
