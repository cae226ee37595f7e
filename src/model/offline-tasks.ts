// The offline model's one-shot tasks and structured chat answers, registered per agent by name: without a
// GEMINI_API_KEY every pipeline still runs end to end, deterministically, and says it is offline.
import { recipeImage, recipeImagePrompt, recipeStructuring } from '../agents/recipes/offline-save.ts';
import { webSummaryOffline } from '../agents/beer/offline-finder.ts';
import type { ModelRequest } from './types.ts';
import { offlineSqlGeneration } from '../agents/beer/offline-sql.ts';
import { offlineSous } from '../agents/sous/offline.ts';
import type { ImageReply, ImageRequest, TaskModel, TaskReply, TaskRequest } from './task-model.ts';

/** Answers a TaskRequest with text (JSON when the request has a schema). */
export type OfflineTask = (request: TaskRequest) => string | Omit<TaskReply, 'usage' | 'model'>;
/** Answers a chat turn whose reply must be JSON (ModelRequest.output), by the output's name. */
export type OfflineStructured = (request: ModelRequest) => string;
export type OfflineImage = (request: ImageRequest) => Omit<ImageReply, 'model'>;

/** Each agent adds its tasks here (one line). */
const TASKS: Record<string, OfflineTask> = {
  recipe_structuring: recipeStructuring,
  recipe_image_prompt: recipeImagePrompt,
  web_summary: (request) => webSummaryOffline(request),
  sql_generation: offlineSqlGeneration,
};
const STRUCTURED: Record<string, OfflineStructured> = { sous: offlineSous };
const IMAGES: Record<string, OfflineImage> = {
  recipe_image: recipeImage,
};

export const OFFLINE_NAME = 'offline';
export const OFFLINE_PREFIX = '[offline model] ';

export function offlineStructured(name: string): OfflineStructured | undefined {
  return STRUCTURED[name];
}

export function createOfflineTaskModel(): TaskModel {
  return {
    name: OFFLINE_NAME,
    offline: true,
    async complete(request) {
      const task = TASKS[request.task];
      if (!task) throw new Error(`The offline model has no task "${request.task}"`);
      const answer = task(request);
      const reply = typeof answer === 'string' ? { text: answer } : answer;
      const inputTokens = Math.ceil(request.prompt.length / 4);
      const outputTokens = Math.ceil(reply.text.length / 4);
      return { ...reply, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }, model: OFFLINE_NAME };
    },
    async image(request) {
      const image = IMAGES[request.task];
      if (!image) throw new Error(`The offline model has no image task "${request.task}"`);
      return { ...image(request), model: OFFLINE_NAME };
    },
  };
}
