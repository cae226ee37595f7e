// The save pipeline's shapes, shared by the saveRecipe workflow, its activities and the tests: the tool's
// contract result (seed 000), the steps and the progress events a client sees while it runs.
import { z } from 'zod';

export const SAVE_STEPS = ['structure', 'image_prompt', 'image', 'upload', 'insert'] as const;
export const SaveStep = z.enum(SAVE_STEPS);
export type SaveStep = z.infer<typeof SaveStep>;

export const ProgressState = z.enum(['started', 'done', 'failed', 'skipped']);
export type ProgressState = z.infer<typeof ProgressState>;

/** The data of a `progress` event: which step of which workflow, and how it went. */
export const SaveProgress = z.object({
  workflowId: z.string(),
  step: SaveStep,
  /** 1-based */
  index: z.number().int().min(1),
  of: z.number().int().min(1),
  state: ProgressState,
  message: z.string().optional(),
});
export type SaveProgress = z.infer<typeof SaveProgress>;

/** Seed 000's result of save_recipe. */
export const SaveRecipeResult = z.union([
  z.object({
    status: z.literal('saved'),
    recipe_id: z.string(),
    recipe_name: z.string(),
    image_url: z.string().nullable(),
    message: z.string(),
  }),
  z.object({ status: z.literal('error'), error: z.string() }),
]);
export type SaveRecipeResult = z.infer<typeof SaveRecipeResult>;
