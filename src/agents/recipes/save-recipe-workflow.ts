// save_recipe as a child workflow (the save pipeline's five steps): structure, image prompt, image, upload, insert. The
// recipe id is the conversation's (it ends this workflow's ID, save-recipe-<id>): the image key and the row
// use it, so a retried or replayed step writes nothing twice. Each step is an activity with retries and a
// summary, and reports its progress as `progress` events that reach the conversation's SSE clients.
// Only the structuring is essential: a recipe whose image could not be made is saved without one.
import { ApplicationFailure, log, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { RecipeActivities, StagedImage } from './activity-types.ts';
import type { ChildToolInput, ChildToolOutput } from '../../shared/child-tool.ts';
import type { JsonObject } from '../../shared/messages.ts';
import type { ProgressState } from '../../shared/progress.ts';
import { RecipeCardMessage, type RecipeContent } from './recipe.ts';
import { SAVE_STEPS, type SaveRecipeResult, type SaveStep } from './save-pipeline.ts';
import { describeIssues } from '../../shared/tool-spec.ts';
import { describeError } from '../../shared/log-safe.ts';
import { SaveRecipeArgs } from './tools.ts';
import { userFacingReason } from '../../workflows/failure-text.ts';
import { progressReporter } from '../../workflows/progress.ts';

/** How often the image and its upload are made again when the staged image was lost between them. */
const IMAGE_ROUNDS = 2;

export async function saveRecipe(input: ChildToolInput): Promise<ChildToolOutput> {
  const { id: recipeId, conversationId, userId, settings } = input;
  // the pipeline's model calls are the conversation's user's: charged to them in the usage ledger
  const chargedTo = { userId, conversationId };
  const { workflowId } = workflowInfo();

  // Timeout profiles. Model steps may take long (structuring may ask again when an answer does not fit):
  // heartbeating, retried as the conversation's model calls are. Storage and the database are quick calls.
  const models = proxyActivities<RecipeActivities>({
    startToCloseTimeout: settings.modelTimeoutMs * 5,
    heartbeatTimeout: Math.min(settings.modelTimeoutMs, 10_000),
    retry: { maximumAttempts: settings.modelMaxAttempts, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s' },
  });
  const storage = proxyActivities<RecipeActivities>({
    startToCloseTimeout: '60s',
    heartbeatTimeout: '5s',
    retry: { maximumAttempts: 5, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
  });
  const database = proxyActivities<RecipeActivities>({
    startToCloseTimeout: '30s',
    heartbeatTimeout: '5s',
    retry: { maximumAttempts: 10, initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5s' },
  });
  const reporter = progressReporter({ conversationId, userId }, SAVE_STEPS);
  const progress = (step: SaveStep, state: ProgressState, message?: string, write = true): Promise<void> =>
    reporter.report(step, state, message, { write });
  const flushProgress = reporter.flush;

  /** steps that have begun, so the ones after a failure can be reported as skipped */
  const begun = new Set<SaveStep>();

  /** Runs one step between its `started` and its `done` or `failed` event. */
  const step = async <T>(name: SaveStep, run: () => Promise<T>, done?: (value: T) => string): Promise<T> => {
    begun.add(name);
    setCurrentDetails(`Step ${SAVE_STEPS.indexOf(name) + 1} of ${SAVE_STEPS.length}: ${name} (recipe ${recipeId}).`);
    await progress(name, 'started');
    try {
      const value = await run();
      await progress(name, 'done', done?.(value), false);
      return value;
    } catch (error) {
      await progress(name, 'failed', reasonOf(error));
      throw error;
    }
  };

  const parsed = SaveRecipeArgs.safeParse(input.args);
  if (!parsed.success) return failed(`Invalid arguments for save_recipe: ${describeIssues(parsed.error)}`);
  const raw = parsed.data.raw_recipe_data;

  // 1. Structure. Without a recipe there is nothing to save: the error goes back to the model.
  let recipe: RecipeContent;
  try {
    const outcome = await step(
      'structure',
      async () => {
        const result = await models.structureRecipe.executeWithOptions({ summary: `structure recipe ${recipeId}` }, [
          { recipeId, raw, ...chargedTo },
        ]);
        if (!result.ok) throw ApplicationFailure.create({ type: 'ModelOutputInvalid', message: result.error, nonRetryable: true });
        return result.recipe;
      },
      (value) => `${value.name} (${value.recipe_type})`,
    );
    recipe = outcome;
  } catch (error) {
    await skip(['image_prompt', 'image', 'upload', 'insert'], 'the recipe could not be structured');
    return failed(`Could not save the recipe: ${reasonOf(error)} Nothing was saved.`);
  }

  // 2-4. The image. A failure here costs the image, not the recipe.
  let imageUrl: string | null = null;
  let imageProblem: string | undefined;
  try {
    const prompt = await step('image_prompt', () =>
      models.writeImagePrompt.executeWithOptions({ summary: `image prompt for ${recipe.name}` }, [{ recipeId, recipe, ...chargedTo }]),
    );
    for (let round = 1; ; round += 1) {
      const staged: StagedImage = await step(
        'image',
        () => models.generateRecipeImage.executeWithOptions({ summary: `image for ${recipe.name}` }, [{ recipeId, prompt, ...chargedTo }]),
        (image) => `${image.bytes} bytes from ${image.model}`,
      );
      try {
        const uploaded = await step(
          'upload',
          () =>
            storage.uploadRecipeImage.executeWithOptions({ summary: `upload recipes/${recipeId}.png` }, [
              { recipeId, mimeType: staged.mimeType },
            ]),
          (value) => value.url,
        );
        imageUrl = uploaded.url;
        break;
      } catch (error) {
        if (round >= IMAGE_ROUNDS || failureType(error) !== 'ImageLost') throw error;
        log.warn('The staged image was lost before its upload; making it again', { recipeId });
      }
    }
  } catch (error) {
    const failedStep = (['upload', 'image', 'image_prompt'] as const).find((name) => begun.has(name))!;
    const what = { image_prompt: 'the image prompt', image: 'the image generation', upload: 'the upload' }[failedStep];
    imageProblem = `${what} failed (${reasonOf(error).replace(/\.$/, '')})`;
    log.warn('Saving the recipe without an image', { recipeId, step: failedStep, reason: describeError(error) });
    await skip(
      (['image', 'upload'] as const).filter((name) => !begun.has(name)),
      'no image',
    );
  }

  // 5. Insert, keyed on the recipe id.
  try {
    await step('insert', () =>
      database.insertRecipe.executeWithOptions({ summary: `insert recipe ${recipeId}` }, [
        { recipeId, userId, conversationId, recipe, imageUrl },
      ]),
    );
  } catch (error) {
    return failed(`Could not store the recipe: ${reasonOf(error)}`);
  }
  await flushProgress();
  setCurrentDetails(`Saved recipe ${recipeId} (${recipe.name})${imageUrl ? '' : ' without an image'}.`);

  const message = imageUrl
    ? // the address is in image_url (and on the card); a sentence a person may be shown carries none
      `Saved '${recipe.name}' to your collection, with its image.`
    : `Saved '${recipe.name}' to your collection without an image: ${imageProblem ?? 'no image was made'}.`;
  const result: SaveRecipeResult = { status: 'saved', recipe_id: recipeId, recipe_name: recipe.name, image_url: imageUrl, message };
  const card = RecipeCardMessage.parse({
    type: 'recipe_card',
    recipe_id: recipeId,
    recipe_name: recipe.name,
    recipe_type: recipe.recipe_type,
    prep_time: recipe.prep_time ?? null,
    servings: recipe.servings ?? null,
    image_url: imageUrl,
    status: 'saved',
  });
  return { result: result as JsonObject, cards: [card as JsonObject] };

  /** Steps that will not run, so a client's progress bar ends. */
  async function skip(names: readonly SaveStep[], why: string): Promise<void> {
    for (const name of names) await progress(name, 'skipped', why, false);
    await flushProgress();
  }
}

function failed(error: string): ChildToolOutput {
  const result: SaveRecipeResult = { status: 'error', error };
  return { result: result as JsonObject };
}

function failureType(error: unknown): string | undefined {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if (current instanceof ApplicationFailure && current.type) return current.type;
  }
  return undefined;
}

/** A sentence for the model and the user: a shown failure's own words, else a generic one. */
function reasonOf(error: unknown): string {
  const reason = userFacingReason(error);
  return reason.endsWith('.') ? reason : `${reason}.`;
}
