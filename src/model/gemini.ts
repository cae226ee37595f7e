// Gemini over @google/genai, streamed. One call is one HTTP request: Temporal's activity retry policy owns
// backoff and the attempt count, so the SDK's own retries and automatic continuations are switched off.
import type { FunctionDeclaration, GenerateContentResponseUsageMetadata, Tool } from '@google/genai';
import type { JsonObject } from '../shared/messages.ts';
import { sortedKeys } from '../shared/sorted-keys.ts';
import { createGenAiClient } from './genai-client.ts';
import { needsThoughtSignatures, toContents } from './gemini-contents.ts';
import { type CachePrefix, type ContextCacheSettings, createContextCache, refusedForCache } from './gemini-cache.ts';
import { toModelCallError } from './gemini-errors.ts';
import { toUsage } from './gemini-usage.ts';
import { ModelCallError } from './types.ts';
import type { ChatModel, ModelReply, ModelRequest, ToolDeclaration } from './types.ts';

export interface GeminiOptions {
  apiKey: string;
  /** another Gemini-compatible endpoint (a proxy, or the tests' fake server) */
  baseUrl?: string;
  model: string;
  /**
   * a clock on the whole request, body included (the SDK's); absent, none: a chat call is paced instead
   * (stream-pacing.ts), so that a long answer is not cut
   */
  timeoutMs?: number;
  /** implicit (default: the prefix is sent byte-stable, Gemini caches it on its own) or explicit caching */
  contextCache?: ContextCacheSettings;
}

// Finish reasons after which the reply is complete; any other one means Gemini withheld or broke it.
const NORMAL_FINISH = new Set(['STOP', 'MAX_TOKENS', 'FINISH_REASON_UNSPECIFIED']);

export function createGeminiModel(opts: GeminiOptions): ChatModel {
  const client = createGenAiClient({
    apiKey: opts.apiKey,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
  });
  const signFunctionCalls = needsThoughtSignatures(opts.model);
  const errorContext = { apiKey: opts.apiKey, timeoutMs: opts.timeoutMs ?? 0 };
  const contextCache = createContextCache(client, opts.model, opts.contextCache ?? { mode: 'implicit', ttlMs: 0, minTokens: 0 });

  return {
    name: opts.model,
    async generate(request: ModelRequest): Promise<ModelReply> {
      let callbackFailure: { error: unknown } | undefined;
      const deliver = (delta: string) => {
        try {
          request.onText?.(delta);
        } catch (error) {
          callbackFailure = { error };
          throw error;
        }
      };

      try {
        const prefix: CachePrefix = {
          ...systemInstruction(request),
          ...(request.tools.length > 0 ? { tools: toTools(request.tools) } : {}),
        };
        const open = (cachedContent: string | undefined) =>
          client.models.generateContentStream({
            model: opts.model,
            contents: toContents(request.messages, { signFunctionCalls }),
            config: {
              // a cache holds the prefix: the call names it instead of sending it again
              ...(cachedContent ? { cachedContent } : prefix),
              ...(request.output ? { responseMimeType: 'application/json', responseJsonSchema: request.output.schema } : {}),
              ...(request.signal ? { abortSignal: request.signal } : {}),
              // the runtime runs tools (with approvals); the SDK must never call or re-request on its own
              automaticFunctionCalling: { disable: true },
              automaticContinuation: false,
            },
          });
        const cachedContent = await contextCache.nameFor(prefix);
        const stream = await open(cachedContent).catch((error: unknown) => {
          // refused for its cache (expired, deleted, not for this model): once more without it, never a failure
          if (!cachedContent || !refusedForCache(error)) throw error;
          contextCache.refused();
          return open(undefined);
        });

        let text = '';
        const toolCalls: ModelReply['toolCalls'] = [];
        let usage: GenerateContentResponseUsageMetadata | undefined;
        let sawCandidate = false;
        let finishReason: string | undefined;
        let blockReason: string | undefined;
        let modelVersion: string | undefined;

        for await (const chunk of stream) {
          request.onPiece?.();
          if (chunk.usageMetadata) {
            usage = chunk.usageMetadata;
            request.onUsage?.(toUsage(usage));
          }
          if (chunk.modelVersion) modelVersion = chunk.modelVersion;
          if (chunk.promptFeedback?.blockReason) blockReason = chunk.promptFeedback.blockReason;
          const candidate = chunk.candidates?.[0];
          if (!candidate) continue;
          sawCandidate = true;
          if (candidate.finishReason) finishReason = candidate.finishReason;
          for (const part of candidate.content?.parts ?? []) {
            // thought summaries are the model's scratch work, not its reply
            if (part.thought) continue;
            if (typeof part.text === 'string' && part.text.length > 0) {
              text += part.text;
              deliver(part.text);
            }
            if (part.functionCall) toolCalls.push(readCall(part.functionCall));
          }
        }

        if (!sawCandidate) {
          throw new ModelCallError(blockReason ? `Gemini blocked the prompt (${blockReason})` : 'Gemini returned no candidates', {
            retryable: false,
          });
        }
        if (finishReason && !NORMAL_FINISH.has(finishReason)) {
          throw new ModelCallError(`Gemini stopped the reply: ${finishReason}`, { retryable: false });
        }
        if (finishReason === 'MAX_TOKENS' && !text && toolCalls.length === 0) {
          throw new ModelCallError('Gemini ran out of output tokens before it replied', { retryable: false });
        }
        return { text, toolCalls, usage: toUsage(usage), model: modelVersion ?? opts.model };
      } catch (error) {
        if (callbackFailure && error === callbackFailure.error) throw error;
        // a cancelled activity gets its own cancellation back, not a model failure
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        throw toModelCallError(error, errorContext);
      }
    },
  };
}

/**
 * The system prompt, and a stateful agent's context as a part of its own: structured data the model reads,
 * never pasted into what the user wrote. The prompt comes first and the context after it, its keys sorted: what
 * precedes the transcript is the same bytes on every call while the context does not change, and the prompt's
 * bytes stay the request's opening when it does (a provider caches a repeated prefix).
 */
function systemInstruction(request: ModelRequest) {
  const parts = [
    ...(request.system ? [{ text: request.system }] : []),
    ...(request.context ? [{ text: `${CONTEXT_MARKER}\n${JSON.stringify(sortedKeys(request.context))}` }] : []),
  ];
  return parts.length ? { systemInstruction: { parts } } : {};
}

/** Introduces the context part, so the model (and a test) can tell it from the prompt. */
export const CONTEXT_MARKER = 'Context (JSON, from the application, not from the user):';

function toTools(declarations: readonly ToolDeclaration[]): Tool[] {
  const functionDeclarations: FunctionDeclaration[] = declarations.map((declaration) => ({
    name: declaration.name,
    description: declaration.description,
    parametersJsonSchema: declaration.parameters,
  }));
  return [{ functionDeclarations }];
}

function readCall(call: { name?: string; args?: Record<string, unknown> }): { name: string; args: JsonObject } {
  if (!call.name) throw new ModelCallError('Gemini returned a function call without a name', { retryable: false });
  const args = call.args ?? {};
  if (typeof args !== 'object' || Array.isArray(args)) {
    throw new ModelCallError(`Gemini returned non-object arguments for ${call.name}`, { retryable: false });
  }
  return { name: call.name, args: args as JsonObject };
}
