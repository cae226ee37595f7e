// The save pipeline's shapes, shared by the saveRecipe workflow, its activities and the tests: the tool's
// contract result, the steps and the progress events a client sees while it runs.
import { z } from 'zod';
import { Progress } from '../../shared/progress.ts';

export const SAVE_STEPS = ['structure', 'image_prompt', 'image', 'upload', 'insert'] as const;
export const SaveStep = z.enum(SAVE_STEPS);
export type SaveStep = z.infer<typeof SaveStep>;

/** The data of the save's `progress` events: the one progress shape, with the save's steps. */
export const SaveProgress = Progress.extend({ step: SaveStep });
export type SaveProgress = z.infer<typeof SaveProgress>;

/** The result of save_recipe, as the model and the client get it. */
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
