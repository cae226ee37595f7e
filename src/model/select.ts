// Gemini when a key is set, otherwise the offline model: `npm start` works with no settings at all.
import type { Config } from '../config.ts';
import { createGeminiModel } from './gemini.ts';
import { createOfflineModel } from './offline.ts';
import { createOfflineTaskModel } from './offline-tasks.ts';
import { type TaskModel, createGeminiTaskModel } from './task-model.ts';
import type { ChatModel } from './types.ts';

export type ModelConfig = Pick<Config, 'GEMINI_API_KEY' | 'GEMINI_BASE_URL' | 'GEMINI_MODEL'> & {
  MODEL_TIMEOUT?: number;
  GEMINI_IMAGE_MODEL?: string;
};

export function selectModel(config: ModelConfig): ChatModel {
  const apiKey = config.GEMINI_API_KEY?.trim();
  if (!apiKey) return createOfflineModel();
  return createGeminiModel({
    apiKey,
    model: config.GEMINI_MODEL,
    ...(config.GEMINI_BASE_URL ? { baseUrl: config.GEMINI_BASE_URL } : {}),
    ...(config.MODEL_TIMEOUT !== undefined ? { timeoutMs: config.MODEL_TIMEOUT } : {}),
  });
}

/** The model for one-shot tasks (pipelines, SQL generation, grounding), chosen the same way. */
export function selectTaskModel(config: ModelConfig): TaskModel {
  const apiKey = config.GEMINI_API_KEY?.trim();
  if (!apiKey) return createOfflineTaskModel();
  return createGeminiTaskModel({
    apiKey,
    model: config.GEMINI_MODEL,
    imageModel: config.GEMINI_IMAGE_MODEL ?? 'gemini-3-pro-image-preview',
    timeoutMs: config.MODEL_TIMEOUT ?? 60_000,
    ...(config.GEMINI_BASE_URL ? { baseUrl: config.GEMINI_BASE_URL } : {}),
  });
}
