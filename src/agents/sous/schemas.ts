// Sous's shapes: the Recipe State, the User Defaults, the PatchSet the model proposes and the
// decisions on it. Plain zod, so the workflow, the model activity and the API share one declaration each.
import { z } from 'zod';
import { UNSTORABLE_MESSAGE, isStorableText } from '../../shared/safe-text.ts';

// Every string may end up in a jsonb event or message: text PostgreSQL cannot store is refused (a client gets
// a 400 naming the field; the model is asked again).
const storable = (schema: z.ZodString) => schema.refine(isStorableText, UNSTORABLE_MESSAGE);
const text = storable(z.string().trim().min(1, 'must not be empty').max(2000, 'must be at most 2000 characters'));
const id = storable(z.string().trim().min(1, 'must not be empty').max(40, 'must be at most 40 characters'));

export const StepStatus = z.enum(['todo', 'done']);
export type StepStatus = z.infer<typeof StepStatus>;

export const Ingredient = z.object({ id, text });
export type Ingredient = z.infer<typeof Ingredient>;

export const Step = z.object({ id, text, status: StepStatus });
export type Step = z.infer<typeof Step>;

/** The recipe being cooked. `version` goes up with every change (an accepted PatchSet, a step marked done). */
export const Recipe = z.object({
  title: storable(z.string().trim().min(1).max(200)),
  version: z.number().int().positive(),
  servings: z.number().int().positive().max(1000),
  ingredients: z.array(Ingredient).max(200),
  steps: z.array(Step).max(200),
  notes: z.array(text).max(200),
});
export type Recipe = z.infer<typeof Recipe>;

export const UserDefaults = z.object({
  /** things the user never eats: hard constraints, families included (see derivatives.ts) */
  hardAvoids: z.array(storable(z.string().trim().toLowerCase().min(1).max(50))).max(30),
  /** how many people the user usually cooks for: quantities only */
  portions: z.number().int().positive().max(1000),
});
export type UserDefaults = z.infer<typeof UserDefaults>;

// ---- patches, as the model writes them (the patch operations with an `op` discriminator) ----------
// Each `op` is a one-value enum rather than a literal: the response schema then says `enum`, which every
// Gemini schema dialect accepts, instead of `const`, which some refuse.

export const AddStep = z.object({ op: z.enum(['add_step']), after_step_id: id, text });
export const UpdateStep = z.object({ op: z.enum(['update_step']), step_id: id, text });
export const UpdateIngredient = z.object({ op: z.enum(['update_ingredient']), id, text });
export const AddIngredient = z.object({ op: z.enum(['add_ingredient']), text });
export const RemoveIngredient = z.object({ op: z.enum(['remove_ingredient']), id });
export const AddNote = z.object({ op: z.enum(['add_note']), text });

// A plain union (anyOf in the response schema, which Gemini accepts); each member's `op` literal tells them apart.
export const Patch = z.union([AddStep, UpdateStep, UpdateIngredient, AddIngredient, RemoveIngredient, AddNote]);
export type Patch = z.infer<typeof Patch>;
export type PatchOp = Patch['op'];

export const Impacted = z.object({
  ingredientsAdded: z.number().int().nonnegative().optional(),
  ingredientsModified: z.number().int().nonnegative().optional(),
  ingredientsRemoved: z.number().int().nonnegative().optional(),
  stepsAdded: z.number().int().nonnegative().optional(),
  stepsModified: z.number().int().nonnegative().optional(),
  stepsRemoved: z.number().int().nonnegative().optional(),
});
export type Impacted = z.infer<typeof Impacted>;

export const PatchSummary = z.object({
  title: storable(z.string().max(200)).optional(),
  bullets: z
    .array(storable(z.string().max(500)))
    .max(20)
    .optional(),
  impacted: Impacted.optional(),
});
export type PatchSummary = z.infer<typeof PatchSummary>;

/** What the model proposes. `portions` marks a scaling PatchSet: it may change quantities only. */
export const ProposedPatchSet = z.object({
  patchSetId: id,
  patches: z.array(Patch).min(1, 'must hold at least one patch').max(60),
  summary: PatchSummary.optional(),
  portions: z.number().int().positive().max(1000).optional(),
});
export type ProposedPatchSet = z.infer<typeof ProposedPatchSet>;

/** The model's whole answer: a short reply, and a PatchSet or null (a question, an ambiguity, a conflict). */
export const SousAnswer = z.object({
  assistant_message: storable(z.string().trim().min(1).max(4000)),
  patchSet: ProposedPatchSet.nullable().optional(),
});
export type SousAnswer = z.infer<typeof SousAnswer>;

/** A PatchSet as the server keeps it: stamped with the version it was made against, summary counted. */
export const PatchSet = ProposedPatchSet.extend({
  baseVersion: z.number().int().positive(),
  summary: PatchSummary.extend({ impacted: Impacted }),
});
export type PatchSet = z.infer<typeof PatchSet>;

export const PatchDecisionName = z.enum(['accepted', 'rejected']);
export type PatchDecisionName = z.infer<typeof PatchDecisionName>;

export const PatchDecision = z.object({
  patchSetId: z.string(),
  pendingId: z.string(),
  decision: PatchDecisionName,
  /** the recipe's version after the decision */
  version: z.number().int().positive(),
  summary: PatchSummary.optional(),
  at: z.string(),
});
export type PatchDecision = z.infer<typeof PatchDecision>;

/** What the next model request carries once (context.llm.lastPatchDecision). */
export const LastPatchDecision = z.object({
  patchSetId: z.string(),
  decision: PatchDecisionName,
  summary: PatchSummary.optional(),
});
export type LastPatchDecision = z.infer<typeof LastPatchDecision>;

// ---- the review (Patch Review Mode) ----------------------------------------------------------------

export const ChangeStatus = z.enum(['added', 'modified', 'removed', 'unchanged']);
export type ChangeStatus = z.infer<typeof ChangeStatus>;

export const ReviewIngredient = z.object({
  id: z.string(),
  change: ChangeStatus,
  text: z.string(),
  /** modified: the text before */
  oldText: z.string().optional(),
});
export type ReviewIngredient = z.infer<typeof ReviewIngredient>;

export const ReviewStep = ReviewIngredient.extend({ status: StepStatus });
export type ReviewStep = z.infer<typeof ReviewStep>;

export const Review = z.object({
  baseVersion: z.number().int().positive(),
  ingredients: z.array(ReviewIngredient),
  steps: z.array(ReviewStep),
  /** the notes the PatchSet adds */
  notes: z.array(z.string()),
  summary: PatchSummary.extend({ impacted: Impacted }),
  /** the recipe exactly as it will be if the PatchSet is accepted */
  endState: Recipe,
});
export type Review = z.infer<typeof Review>;

// ---- the API's starting point -------------------------------------------------------------------------

/** A recipe as a client gives it: ids and statuses optional (made up in order: i1…, s1…; todo). */
export const RecipeInput = z
  .object({
    title: storable(z.string().trim().min(1).max(200)),
    servings: z.number().int().positive().max(1000).optional(),
    ingredients: z
      .array(z.union([text, z.object({ id: id.optional(), text })]))
      .min(1)
      .max(200),
    steps: z
      .array(z.union([text, z.object({ id: id.optional(), text, status: StepStatus.optional() })]))
      .min(1)
      .max(200),
    notes: z.array(text).max(200).optional(),
  })
  .superRefine((recipe, ctx) => {
    const seen = new Set<string>();
    for (const [list, items] of [
      ['ingredients', recipe.ingredients],
      ['steps', recipe.steps],
    ] as const) {
      items.forEach((item, index) => {
        const given = typeof item === 'string' ? undefined : item.id;
        if (given === undefined) return;
        if (seen.has(given)) ctx.addIssue({ code: 'custom', path: [list, index, 'id'], message: `duplicate id "${given}"` });
        seen.add(given);
      });
    }
  });
export type RecipeInput = z.infer<typeof RecipeInput>;

export const DefaultsInput = z.object({
  hardAvoids: UserDefaults.shape.hardAvoids.optional(),
  portions: UserDefaults.shape.portions.optional(),
});
export type DefaultsInput = z.infer<typeof DefaultsInput>;

/** ChatSessionInput.init for sous, as the API hands it over (already validated). */
export const SousInit = z.object({
  recipe: RecipeInput.optional(),
  defaults: DefaultsInput.optional(),
  /** the caller's saved recipe (recipes agent) the recipe was loaded from, when it was */
  savedRecipeId: z.uuid().optional(),
});
export type SousInit = z.infer<typeof SousInit>;
