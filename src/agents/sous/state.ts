// A sous conversation's own state, kept by chatSession and carried across continue-as-new.
import { z } from 'zod';
import { DEMO_RECIPE } from './demo.ts';
import { LastPatchDecision, Patch, PatchDecision, PatchSummary, Recipe, type RecipeInput, SousInit, UserDefaults } from './schemas.ts';

export const SousState = z.object({
  recipe: Recipe,
  defaults: UserDefaults,
  /** every PatchSet decision, newest last (bounded) */
  decisions: z.array(PatchDecision),
  /** goes into the next model request once, then is cleared */
  lastPatchDecision: LastPatchDecision.optional(),
  /** hard avoids the user overrode for this recipe in this conversation */
  overrides: z.array(z.string()),
  /** the saved recipe the conversation started from: a saved changed version takes its type, times and tags */
  savedRecipeId: z.uuid().optional(),
  /** PatchSets accepted over the whole conversation (decisions keeps only the newest) */
  accepted: z.number().int().nonnegative().optional(),
  /**
   * What the last context shown to the model was made from: the version a PatchSet is stamped with and
   * whether lastPatchDecision went out. Written by context() (see kernel.ts for why).
   */
  seen: z.object({ version: z.number().int(), lastPatchDecisionId: z.string().optional() }).optional(),
  /**
   * The PatchSet under review, for the model's context (context() sees the state, not the open items). The
   * kernel names the item itself, so this stays in step with it: set when opened, cleared when decided,
   * expired or superseded.
   */
  pending: z
    .object({
      pendingId: z.string(),
      patchSetId: z.string(),
      baseVersion: z.number().int(),
      summary: PatchSummary.optional(),
      patches: z.array(Patch),
    })
    .optional(),
});
export type SousState = z.infer<typeof SousState>;

/** How many decisions the state keeps (and hands to the next run). */
export const DECISIONS_KEPT = 50;

/** A client's recipe as Recipe State: ids made up in order where missing, steps todo unless said. */
export function recipeFromInput(input: RecipeInput, servings?: number): Recipe {
  const used = new Set<string>();
  for (const item of [...input.ingredients, ...input.steps]) if (typeof item !== 'string' && item.id) used.add(item.id);
  const fresh = (prefix: string) => {
    let n = 1;
    while (used.has(`${prefix}${n}`)) n += 1;
    used.add(`${prefix}${n}`);
    return `${prefix}${n}`;
  };
  return {
    title: input.title,
    version: 1,
    servings: input.servings ?? servings ?? 2,
    ingredients: input.ingredients.map((item) =>
      typeof item === 'string' ? { id: fresh('i'), text: item } : { id: item.id ?? fresh('i'), text: item.text },
    ),
    steps: input.steps.map((item) =>
      typeof item === 'string'
        ? { id: fresh('s'), text: item, status: 'todo' as const }
        : { id: item.id ?? fresh('s'), text: item.text, status: item.status ?? 'todo' },
    ),
    notes: input.notes ?? [],
  };
}

export function initialState(raw: unknown): SousState {
  const init = SousInit.parse(raw ?? {});
  const recipe = recipeFromInput(init.recipe ?? DEMO_RECIPE, init.defaults?.portions);
  return {
    recipe,
    defaults: { hardAvoids: init.defaults?.hardAvoids ?? [], portions: init.defaults?.portions ?? recipe.servings },
    decisions: [],
    overrides: [],
    ...(init.savedRecipeId ? { savedRecipeId: init.savedRecipeId } : {}),
  };
}
