// The save pipeline's side effects (its five steps). Each is idempotent by the recipe id that the
// workflow made: the model steps only compute, the image is staged and published under keys made from the
// id (an overwrite writes the same object again), and the insert does nothing when the row is there.
import { readPrompt } from '../../model/prompts.ts';
import { asModelFailure } from '../../activities/model-failure.ts';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { asUser } from '../../db/pool.ts';
import { ModelOutputInvalid, askStructured, responseSchema } from '../../model/structured.ts';
import { ModelCallError } from '../../model/types.ts';
import { RecipeContent } from './recipe.ts';
import { storableJson, storableText } from '../../shared/safe-text.ts';
import { type ObjectStore, createObjectStore } from '../../storage/index.ts';
import { recipeImageKey, stagedImageKey } from './image-keys.ts';
import type { Services } from '../../activities/services.ts';
import { activityCallKey } from '../../activities/usage-meter.ts';
import type { ChargedTo, RecipeActivities } from './activity-types.ts';

/** A task prompt from prompts/recipes/<name>.txt, read once. */
const taskPrompt = (name: 'recipe_structuring' | 'image_prompt_gen'): Promise<string> => readPrompt('recipes', name);

const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => values[name] ?? whole);

/** The raw recipe goes between markers, so neither a model nor the offline parser mistakes it for instructions. */
export const RAW_START = '<recipe>';
export const RAW_END = '</recipe>';

/** The ledger's charge for a call of this activity: the conversation's user (the pipeline's input names them). */
const charge = ({ userId, conversationId }: ChargedTo, label: string) => ({
  // an input scheduled before the ledger names nobody: charged to no user rather than to a wrong one
  userId: userId ?? '',
  ...(conversationId ? { conversationId } : {}),
  key: activityCallKey(label),
});

/** Heartbeats on a clock while `work` runs: a dead worker is noticed by its missing heartbeat, not a long timeout. */
async function beating<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), Math.max(200, (context.info.heartbeatTimeoutMs ?? 3000) / 3));
  try {
    return await work(context.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}

export function createRecipeActivities(services: Services, deps: { store?: ObjectStore } = {}): RecipeActivities {
  const { pool, taskModel, config } = services;
  let store = deps.store;
  // Made on first use: a worker that never saves a recipe needs no storage client.
  const objects = () => (store ??= createObjectStore(config));

  return {
    async structureRecipe(input) {
      const { raw } = input;
      let calls = 0;
      const template = await taskPrompt('recipe_structuring');
      const prompt = fill(template, { recipe: `${RAW_START}\n${raw}\n${RAW_END}` });
      const schema = responseSchema(RecipeContent);
      try {
        const recipe = await beating((signal) =>
          askStructured(
            RecipeContent,
            config.MODEL_SCHEMA_ATTEMPTS,
            async (correction) => {
              calls += 1;
              const reply = await taskModel.complete({
                charge: charge(input, `structure:${calls}`),
                task: 'recipe_structuring',
                prompt: correction ? `${prompt}\n\n${correction}` : prompt,
                schema,
                signal,
              });
              return reply.text;
            },
            'The recipe structuring model',
          ),
        );
        // A model's text may hold what PostgreSQL cannot store (NUL, a lone surrogate): made storable, not refused.
        return { ok: true, recipe: storableJson(recipe) };
      } catch (error) {
        if (error instanceof ModelOutputInvalid) return { ok: false, error: error.message };
        throw asModelFailure(error);
      }
    },

    async writeImagePrompt(input) {
      const { recipe } = input;
      const template = await taskPrompt('image_prompt_gen');
      const prompt = fill(template, { recipe: `${RAW_START}\n${JSON.stringify(recipe, null, 2)}\n${RAW_END}` });
      try {
        const reply = await beating((signal) =>
          taskModel.complete({ charge: charge(input, 'image-prompt'), task: 'recipe_image_prompt', prompt, signal }),
        );
        const text = storableText(reply.text).trim();
        if (!text) throw new ModelCallError('The model wrote an empty image prompt', { retryable: true });
        // Image models take a paragraph, not an essay.
        return text.length > 4000 ? text.slice(0, 4000) : text;
      } catch (error) {
        throw asModelFailure(error);
      }
    },

    async generateRecipeImage(input) {
      const { recipeId, prompt } = input;
      try {
        const image = await beating((signal) => taskModel.image({ charge: charge(input, 'image'), task: 'recipe_image', prompt, signal }));
        const key = stagedImageKey(recipeId);
        await objects().put(key, image.data, image.mimeType);
        return { key, bytes: image.data.byteLength, mimeType: image.mimeType, model: image.model };
      } catch (error) {
        throw asModelFailure(error);
      }
    },

    async uploadRecipeImage({ recipeId, mimeType }) {
      const key = recipeImageKey(recipeId);
      const staged = stagedImageKey(recipeId);
      return beating(async () => {
        const data = await objects().get(staged);
        if (data) {
          await objects().put(key, data, mimeType);
          await objects().delete(staged);
        } else if (!(await objects().get(key))) {
          // Neither staged nor published: the staging area was cleared. Only a new image can help.
          throw ApplicationFailure.create({
            type: 'ImageLost',
            message: `The generated image of recipe ${recipeId} is gone`,
            nonRetryable: true,
          });
        }
        // else: an earlier attempt published it and removed the staged copy, then lost its reply.
        return { key, url: objects().publicUrl(key) };
      });
    },

    async insertRecipe({ recipeId, userId, conversationId, recipe, imageUrl }) {
      return beating(() =>
        asUser(pool, userId, async (db) => {
          const { rowCount } = await db.query(
            `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, cook_time,
                                        servings, source_references, notes, tags, image_url, conversation_id)
             VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10::jsonb, $11, $12::jsonb, $13, $14)
             ON CONFLICT (id) DO NOTHING`,
            [
              recipeId,
              userId,
              recipe.name,
              recipe.recipe_type,
              JSON.stringify(recipe.ingredients),
              JSON.stringify(recipe.instructions),
              recipe.prep_time ?? null,
              recipe.cook_time ?? null,
              recipe.servings ?? null,
              JSON.stringify(recipe.source_references ?? []),
              recipe.notes ?? null,
              JSON.stringify(recipe.tags ?? []),
              imageUrl,
              conversationId,
            ],
          );
          return { inserted: rowCount === 1 };
        }),
      );
    },
  };
}
