// Validation before any review: pure, no I/O, shared by the workflow (through the kernel) and
// the API. It returns every reason a PatchSet is refused, in words the model and a person can act on;
// an empty list means it may be reviewed. It never throws.
import { applyPatchSet } from './apply.ts';
import { introducedAvoids } from './derivatives.ts';
import type { Patch, ProposedPatchSet, Recipe, UserDefaults } from './schemas.ts';
import { ingredientName, mentionsIngredient, withoutQuantities } from './words.ts';

export interface ValidationInput {
  recipe: Recipe;
  defaults: UserDefaults;
  patchSet: Pick<ProposedPatchSet, 'patches' | 'portions'> & { baseVersion: number };
  /** hard avoids the user overrode for this recipe in this conversation */
  overrides?: readonly string[];
}

const label = (index: number, patch: Patch) => `patch ${index + 1} (${patch.op})`;

export function validatePatchSet({ recipe, defaults, patchSet, overrides = [] }: ValidationInput): string[] {
  const reasons: string[] = [];
  const patches = patchSet.patches;
  if (patchSet.baseVersion !== recipe.version) {
    reasons.push(`it was made for version ${patchSet.baseVersion} of the recipe, which is now at version ${recipe.version}`);
  }
  const ingredients = new Map(recipe.ingredients.map((i) => [i.id, i]));
  const steps = new Map(recipe.steps.map((s) => [s.id, s]));
  const order = recipe.steps.map((s) => s.id);
  const targets = new Map<string, number[]>();
  const target = (key: string, index: number) => targets.set(key, [...(targets.get(key) ?? []), index]);
  const active = defaults.hardAvoids.filter((avoid) => !overrides.includes(avoid));
  const noteText = patches.flatMap((p) => (p.op === 'add_note' ? [p.text] : [])).join('\n');

  patches.forEach((patch, index) => {
    const name = label(index, patch);
    let before = '';
    switch (patch.op) {
      case 'update_ingredient':
      case 'remove_ingredient': {
        const found = ingredients.get(patch.id);
        if (!found) reasons.push(`${name}: there is no ingredient "${patch.id}"`);
        else before = found.text;
        target(`ingredient:${patch.id}`, index);
        break;
      }
      case 'update_step': {
        const found = steps.get(patch.step_id);
        if (!found) reasons.push(`${name}: there is no step "${patch.step_id}"`);
        else if (found.status === 'done')
          reasons.push(`${name}: step ${patch.step_id} is done and cannot be changed; add a recovery step or a note instead`);
        else before = found.text;
        target(`step:${patch.step_id}`, index);
        break;
      }
      case 'add_step': {
        const at = order.indexOf(patch.after_step_id);
        if (at < 0) {
          reasons.push(`${name}: there is no step "${patch.after_step_id}" to add after`);
          break;
        }
        const next = recipe.steps[at + 1];
        if (next?.status === 'done') {
          reasons.push(`${name}: a new step after ${patch.after_step_id} would come before step ${next.id}, which is already done`);
        }
        break;
      }
      case 'add_ingredient':
      case 'add_note':
        break;
      default:
        // Answers are parsed before they get here; this keeps the promise of never throwing.
        reasons.push(`${name}: unknown operation`);
        return;
    }
    if (patch.op !== 'remove_ingredient' && patch.op !== 'add_note' && typeof patch.text === 'string') {
      for (const { avoid, terms } of introducedAvoids(patch.text, before, active)) {
        reasons.push(`${name}: brings ${terms.map((t) => `"${t}"`).join(', ')}, which the user avoids (${avoid})`);
      }
    }
  });

  for (const [key, indexes] of targets) {
    if (indexes.length < 2) continue;
    const [kind, id] = key.split(':');
    reasons.push(`patches ${indexes.map((i) => i + 1).join(' and ')} all change ${kind} ${id}; one patch per ${kind}`);
  }

  // A removed ingredient must not be left in a step still to do, unless a note of this PatchSet explains.
  const removed = patches.flatMap((p) => (p.op === 'remove_ingredient' && ingredients.has(p.id) ? [ingredients.get(p.id)!] : []));
  if (removed.length) {
    const end = applyPatchSet(recipe, patchSet);
    for (const ingredient of removed) {
      if (mentionsIngredient(noteText, ingredient.text)) continue;
      const users = end.steps.filter((s) => s.status === 'todo' && mentionsIngredient(s.text, ingredient.text)).map((s) => s.id);
      if (users.length) {
        reasons.push(
          `it removes ${ingredient.id} ("${ingredientName(ingredient.text)}") but step ${users.join(', ')} still uses it; update the step or add a note`,
        );
      }
    }
  }

  // A portions change scales quantities and nothing else.
  if (patchSet.portions !== undefined) {
    patches.forEach((patch, index) => {
      const name = label(index, patch);
      if (patch.op === 'add_note') return;
      if (patch.op === 'update_ingredient' || patch.op === 'update_step') {
        const old = patch.op === 'update_ingredient' ? ingredients.get(patch.id)?.text : steps.get(patch.step_id)?.text;
        if (old !== undefined && withoutQuantities(old) !== withoutQuantities(patch.text)) {
          reasons.push(`${name}: a portions change may change quantities only, not "${old}" into "${patch.text}"`);
        }
        return;
      }
      reasons.push(`${name}: a portions change may change quantities only`);
    });
  }
  return reasons;
}
