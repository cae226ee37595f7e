// The sous agent's additions to the API's bodies: where a conversation starts from, and what its view shows.
import { z } from 'zod';
import { UNSTORABLE_MESSAGE, isStorableText } from '../../shared/safe-text.ts';
import { ConversationStatus, PendingItem } from '../../shared/messages.ts';
import { DefaultsInput, PatchDecision, PatchSet, Recipe, RecipeInput, Review, UserDefaults } from './schemas.ts';

const createShape = z.object({
  /** sous: the recipe to cook (a demo recipe when neither this nor recipeId is given) */
  recipe: RecipeInput.optional(),
  /** sous: the caller's own saved recipe (recipes agent) to cook */
  recipeId: z.uuid().optional(),
  /** sous: the User Defaults */
  defaults: DefaultsInput.optional(),
});

export const SousCreateFields = {
  shape: createShape.shape,
  /** A recipe comes from one place (that the fields are sous's own, the API checks for every agent). */
  check(body: Readonly<Record<string, unknown>>, ctx: z.RefinementCtx): void {
    if (body.recipe !== undefined && body.recipeId !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['recipeId'], message: 'give either recipe or recipeId, not both' });
    }
  },
};

export const PendingPatchSet = z.object({ pendingId: z.string(), patchSet: PatchSet, review: Review });

/** What a sous conversation's view adds (absent for other agents). */
export const SousViewFields = z.object({
  recipe: Recipe.optional(),
  defaults: UserDefaults.optional(),
  hardAvoidOverrides: z.array(z.string()).optional(),
  decisions: z.array(PatchDecision).optional(),
  pendingPatchSet: PendingPatchSet.nullable().optional(),
  /** how many PatchSets were accepted in this conversation: the recipe differs from where it started */
  acceptedChanges: z.number().int().nonnegative().optional(),
  /** the caller's saved recipe this conversation started from (POST /v1/conversations with recipeId) */
  savedRecipeId: z.uuid().optional(),
});

/** The answer of a sous action (a step marked done, an override): the conversation's state after it. */
export const SousStateView = SousViewFields.extend({ status: ConversationStatus, pending: z.array(PendingItem) });

export const OverrideBody = z.object({ hardAvoid: UserDefaults.shape.hardAvoids.element });

export const SaveVersionBody = z.object({
  /** the name in My recipes; "<title> (changed)" when not given */
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(200, 'must be at most 200 characters')
    .refine(isStorableText, UNSTORABLE_MESSAGE)
    .optional(),
});

/** The answer of POST /v1/conversations/:id/recipe/save: where the version is in My recipes. */
export const SavedVersion = z.object({
  /** the saved recipe (GET /v1/recipes/{recipeId}) */
  recipeId: z.uuid(),
  name: z.string(),
  /** the conversation's recipe version that was saved */
  version: z.number().int().positive(),
  /** false: this very content was saved before, and that recipe is the answer */
  created: z.boolean(),
});
