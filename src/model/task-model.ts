// One-shot model calls that are not a chat turn: a save pipeline's structuring, image prompt and image, a
// question turned into SQL, a grounded website summary. Gemini when a key is set; otherwise the offline
// tasks (src/model/offline-tasks.ts), looked up by the request's `task` name.
import type { GenerateContentResponse } from '@google/genai';
import type { JsonObject } from '../shared/messages.ts';
import { createGenAiClient } from './genai-client.ts';
import { toModelCallError } from './gemini-errors.ts';
import { toUsage } from './gemini-usage.ts';
import { ModelCallError, type ModelUsage } from './types.ts';

/**
 * Who pays for a call, and the call's stable name: the usage ledger reserves and settles it under `key`
 * (a retried attempt reuses its reservation). Required, so no model call goes unrecorded.
 */
export interface Charge {
  userId: string;
  /** the conversation the call serves, when there is one (conversation budgets, the view's cost) */
  conversationId?: string;
  key: string;
  /**
   * held to the conversation's budgets too (at their base limits), not only the user's daily ones: for a call
   * no turn checked before it, such as a title
   */
  conversationBudget?: boolean;
}

export interface TaskRequest {
  charge: Charge;
  /** names the job (`recipe_structuring`, `sql_generation`, ...): the offline model answers by it */
  task: string;
  /** the prompt file's text, filled in */
  prompt: string;
  system?: string;
  /** the reply must be JSON of this schema (made from a zod schema with z.toJSONSchema) */
  schema?: JsonObject;
  /** ground the answer with Google Search */
  grounding?: boolean;
  /** overrides the configured text model */
  model?: string;
  signal?: AbortSignal;
}

export interface Grounding {
  queries: string[];
  sources: { uri?: string; title?: string }[];
}

export interface TaskReply {
  text: string;
  usage: ModelUsage;
  model: string;
  /** present when the request asked for grounding and the model grounded its answer */
  grounding?: Grounding;
}

export interface ImageRequest {
  charge: Charge;
  task: string;
  prompt: string;
  signal?: AbortSignal;
}

export interface ImageReply {
  mimeType: string;
  data: Uint8Array;
  model: string;
  /** what the model reported, when it did */
  usage?: ModelUsage;
}

export interface TaskModel {
  readonly name: string;
  /** offline models say so in what they write */
  readonly offline: boolean;
  /** the model image() calls, when it is not `name` */
  readonly imageModel?: string;
  complete(request: TaskRequest): Promise<TaskReply>;
  image(request: ImageRequest): Promise<ImageReply>;
}

export interface GeminiTaskOptions {
  apiKey: string;
  baseUrl?: string;
  model: string;
  imageModel: string;
  timeoutMs: number;
}

export function createGeminiTaskModel(opts: GeminiTaskOptions): TaskModel {
  const client = createGenAiClient(opts);
  const errorContext = { apiKey: opts.apiKey, timeoutMs: opts.timeoutMs };
  return {
    name: opts.model,
    offline: false,
    imageModel: opts.imageModel,
    async complete(request) {
      const model = request.model ?? opts.model;
      let response: GenerateContentResponse;
      try {
        response = await client.models.generateContent({
          model,
          contents: [{ role: 'user', parts: [{ text: request.prompt }] }],
          config: {
            ...(request.system ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
            ...(request.schema ? { responseMimeType: 'application/json', responseJsonSchema: request.schema } : {}),
            ...(request.grounding ? { tools: [{ googleSearch: {} }] } : {}),
            ...(request.signal ? { abortSignal: request.signal } : {}),
            temperature: 0,
          },
        });
      } catch (error) {
        throw toModelCallError(error, errorContext);
      }
      const candidate = response.candidates?.[0];
      if (!candidate) {
        const blocked = response.promptFeedback?.blockReason;
        throw new ModelCallError(blocked ? `Gemini blocked the prompt (${blocked})` : 'Gemini returned no candidates', {
          retryable: false,
        });
      }
      const text = (candidate.content?.parts ?? [])
        .filter((part) => !part.thought && typeof part.text === 'string')
        .map((part) => part.text)
        .join('');
      const metadata = candidate.groundingMetadata;
      return {
        text,
        usage: usageOf(response),
        model: response.modelVersion ?? model,
        ...(request.grounding && metadata
          ? {
              grounding: {
                queries: metadata.webSearchQueries ?? [],
                sources: (metadata.groundingChunks ?? []).map((chunk) => ({ uri: chunk.web?.uri, title: chunk.web?.title })),
              },
            }
          : {}),
      };
    },
    async image(request) {
      let response: GenerateContentResponse;
      try {
        response = await client.models.generateContent({
          model: opts.imageModel,
          contents: [{ role: 'user', parts: [{ text: request.prompt }] }],
          config: { responseModalities: ['IMAGE'], ...(request.signal ? { abortSignal: request.signal } : {}) },
        });
      } catch (error) {
        throw toModelCallError(error, errorContext);
      }
      const part = response.candidates?.[0]?.content?.parts?.find((p) => p.inlineData?.data);
      if (!part?.inlineData?.data) throw new ModelCallError('The image model returned no image', { retryable: false });
      return {
        mimeType: part.inlineData.mimeType ?? 'image/png',
        data: Buffer.from(part.inlineData.data, 'base64'),
        model: response.modelVersion ?? opts.imageModel,
        ...(response.usageMetadata ? { usage: usageOf(response) } : {}),
      };
    },
  };
}

function usageOf(response: GenerateContentResponse): ModelUsage {
  return toUsage(response.usageMetadata);
}
