// Applying a PatchSet: pure and total. The kernel applies only PatchSets that passed validate(); on
// anything else it still does something defined (an unknown anchor appends), never throws.
import type { Patch, ProposedPatchSet, Recipe, Step } from './schemas.ts';

/** The next free id with a prefix: i7, s9; never one the recipe (or this PatchSet) already uses. */
function nextId(prefix: string, used: Set<string>): string {
  let n = 1;
  for (const id of used) {
    const match = new RegExp(`^${prefix}(\\d+)$`).exec(id);
    if (match) n = Math.max(n, Number(match[1]) + 1);
  }
  while (used.has(`${prefix}${n}`)) n += 1;
  const id = `${prefix}${n}`;
  used.add(id);
  return id;
}

/** The recipe after every patch, in order, with the version one higher. */
export function applyPatchSet(recipe: Recipe, patchSet: Pick<ProposedPatchSet, 'patches' | 'portions'>): Recipe {
  const used = new Set([...recipe.ingredients.map((i) => i.id), ...recipe.steps.map((s) => s.id)]);
  let ingredients = recipe.ingredients.map((i) => ({ ...i }));
  const steps: Step[] = recipe.steps.map((s) => ({ ...s }));
  const notes = [...recipe.notes];
  /** steps added after each anchor so far, so several adds after one step keep their order */
  const addedAfter = new Map<string, number>();

  for (const patch of patchSet.patches as Patch[]) {
    switch (patch.op) {
      case 'update_ingredient': {
        const target = ingredients.find((i) => i.id === patch.id);
        if (target) target.text = patch.text;
        break;
      }
      case 'add_ingredient':
        ingredients.push({ id: nextId('i', used), text: patch.text });
        break;
      case 'remove_ingredient':
        ingredients = ingredients.filter((i) => i.id !== patch.id);
        break;
      case 'update_step': {
        const target = steps.find((s) => s.id === patch.step_id);
        if (target && target.status === 'todo') target.text = patch.text;
        break;
      }
      case 'add_step': {
        const step: Step = { id: nextId('s', used), text: patch.text, status: 'todo' };
        const anchor = steps.findIndex((s) => s.id === patch.after_step_id);
        if (anchor < 0) {
          steps.push(step);
          break;
        }
        const already = addedAfter.get(patch.after_step_id) ?? 0;
        steps.splice(anchor + 1 + already, 0, step);
        addedAfter.set(patch.after_step_id, already + 1);
        break;
      }
      case 'add_note':
        notes.push(patch.text);
        break;
    }
  }
  return {
    ...recipe,
    version: recipe.version + 1,
    ...(patchSet.portions ? { servings: patchSet.portions } : {}),
    ingredients,
    steps,
    notes,
  };
}
