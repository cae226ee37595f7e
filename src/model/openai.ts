// OpenAI-compatible chat completions over the official `openai` SDK: OpenAI itself, Azure OpenAI, Ollama, vLLM,
// LM Studio, OpenRouter, anything that speaks /v1/chat/completions. Streamed, with the usage chunk asked for
// (stream_options.include_usage); one call is one HTTP request (maxRetries: 0), as for Gemini.
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { JsonObject } from '../shared/messages.ts';
import { STOPPED_NOTE } from '../shared/turn-control.ts';
import { CONTEXT_MARKER } from './gemini.ts';
import { pairedTranscript, resultText } from './paired-transcript.ts';
import { toSdkError } from './sdk-errors.ts';
import { sortedKeys } from '../shared/sorted-keys.ts';
import type { TaskModel } from './task-model.ts';
import { type ChatModel, ModelCallError, type ModelReply, type ModelRequest, type ModelUsage, type ToolDeclaration } from './types.ts';

export interface OpenAiOptions {
  apiKey: string;
  /** with its /v1, as the SDK takes it: https://api.openai.com/v1, http://localhost:11434/v1 (Ollama) */
  baseUrl?: string;
  model: string;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const PROVIDER = 'OpenAI';

export function createOpenAiClient(opts: OpenAiOptions): OpenAI {
  return new OpenAI({
    apiKey: opts.apiKey,
    // explicit, so OPENAI_BASE_URL in the environment is read once, by the config, and nowhere else
    baseURL: opts.baseUrl ?? 'https://api.openai.com/v1',
    maxRetries: 0,
    timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

export function createOpenAiModel(opts: OpenAiOptions): ChatModel {
  const client = createOpenAiClient(opts);
  const errorContext = { provider: PROVIDER, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  return {
    name: opts.model,
    async generate(request: ModelRequest): Promise<ModelReply> {
      let callbackFailure: { error: unknown } | undefined;
      try {
        const stream = await client.chat.completions.create(
          {
            model: opts.model,
            messages: toOpenAiMessages(request),
            ...(request.tools.length > 0 ? { tools: toTools(request.tools) } : {}),
            ...(request.output
              ? {
                  response_format: {
                    type: 'json_schema' as const,
                    json_schema: { name: schemaName(request.output.name), schema: request.output.schema, strict: false },
                  },
                }
              : {}),
            stream: true,
            stream_options: { include_usage: true },
          },
          request.signal ? { signal: request.signal } : {},
        );
        let text = '';
        let usage: ModelUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        let model: string | undefined;
        let finishReason: string | undefined;
        const calls = new Map<number, { id?: string; name: string; arguments: string }>();
        for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
          request.onPiece?.();
          if (chunk.model) model = chunk.model;
          if (chunk.usage) {
            usage = toUsage(chunk.usage);
            request.onUsage?.(usage);
          }
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          if (choice.finish_reason) finishReason = choice.finish_reason;
          const delta = choice.delta ?? {};
          const piece = (delta.content ?? '') + (delta.refusal ?? '');
          if (piece) {
            text += piece;
            try {
              request.onText?.(piece);
            } catch (error) {
              callbackFailure = { error };
              throw error;
            }
          }
          for (const call of delta.tool_calls ?? []) {
            const index = indexOf(call, calls);
            const entry = calls.get(index) ?? { name: '', arguments: '' };
            if (call.id) entry.id = call.id;
            if (call.function?.name) entry.name += call.function.name;
            // some compatible servers send the arguments as an object, not as JSON text
            const args: unknown = call.function?.arguments;
            if (typeof args === 'string') entry.arguments += args;
            else if (args && typeof args === 'object') entry.arguments = JSON.stringify(args);
            calls.set(index, entry);
          }
        }
        if (finishReason === 'content_filter') throw new ModelCallError('OpenAI withheld the reply (content_filter)', { retryable: false });
        const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => readCall(call));
        if (finishReason === 'length' && !text && toolCalls.length === 0) {
          throw new ModelCallError('OpenAI ran out of output tokens before it replied', { retryable: false });
        }
        if (!finishReason && !text && toolCalls.length === 0)
          throw new ModelCallError('OpenAI closed the stream before it replied', { retryable: true });
        return { text, toolCalls, usage, model: model ?? opts.model };
      } catch (error) {
        if (callbackFailure && error === callbackFailure.error) throw error;
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        throw toSdkError(error, errorContext);
      }
    },
  };
}

export function toOpenAiMessages(request: Pick<ModelRequest, 'system' | 'context' | 'messages'>): ChatCompletionMessageParam[] {
  const system = [request.system, ...(request.context ? [`${CONTEXT_MARKER}\n${JSON.stringify(sortedKeys(request.context))}`] : [])]
    .filter(Boolean)
    .join('\n\n');
  const out: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of pairedTranscript(request.messages)) {
    if (message.role === 'user') out.push({ role: 'user', content: message.text });
    else if (message.role === 'tool') out.push({ role: 'tool', tool_call_id: message.callId!, content: resultText(message) });
    else {
      const text = message.stopped ? `${message.text}\n\n${STOPPED_NOTE}`.trim() : message.text;
      const calls = message.toolCalls ?? [];
      if (!text && calls.length === 0) continue;
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: JSON.stringify(sortedKeys(call.args)) },
              })),
            }
          : {}),
      });
    }
  }
  return out;
}

function toTools(declarations: readonly ToolDeclaration[]): ChatCompletionTool[] {
  return declarations.map((d) => ({ type: 'function', function: { name: d.name, description: d.description, parameters: d.parameters } }));
}

/** response_format's name: letters, digits, _ and - only, at most 64. */
function schemaName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'answer';
}

/**
 * Which call a tool-call delta continues. OpenAI numbers them (`index`); some compatible servers leave the
 * number out and send each call whole, with its own id: a new id is a new call, no id continues the last.
 */
function indexOf(call: { index?: number; id?: string }, calls: Map<number, { id?: string }>): number {
  if (typeof call.index === 'number') return call.index;
  const last = Math.max(-1, ...calls.keys());
  if (last < 0) return 0;
  return call.id && calls.get(last)?.id && calls.get(last)!.id !== call.id ? last + 1 : last;
}

function readCall(call: { name: string; arguments: string }): { name: string; args: JsonObject } {
  if (!call.name) throw new ModelCallError('OpenAI returned a tool call without a name', { retryable: false });
  let args: unknown;
  try {
    args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
  } catch {
    throw new ModelCallError(`OpenAI returned arguments for ${call.name} that are not JSON`, { retryable: false });
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    throw new ModelCallError(`OpenAI returned non-object arguments for ${call.name}`, { retryable: false });
  }
  return { name: call.name, args: args as JsonObject };
}

/** prompt_tokens includes what OpenAI's prompt cache served, which it reports apart in prompt_tokens_details. */
function toUsage(usage: {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}): ModelUsage {
  const inputTokens = usage.prompt_tokens ?? 0;
  const outputTokens = usage.completion_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.total_tokens ?? inputTokens + outputTokens,
    ...(cached ? { cachedInputTokens: cached } : {}),
  };
}

/**
 * One-shot tasks over chat completions: structuring with a json_schema response format, SQL generation.
 * Grounding and images are not chat completions: select.ts gives them to a named fallback or says so.
 */
export function createOpenAiTaskModel(opts: OpenAiOptions): Omit<TaskModel, 'image'> {
  const client = createOpenAiClient(opts);
  const errorContext = { provider: PROVIDER, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  return {
    name: opts.model,
    offline: false,
    async complete(request) {
      const model = request.model ?? opts.model;
      try {
        const response = await client.chat.completions.create(
          {
            model,
            messages: [
              ...(request.system ? [{ role: 'system' as const, content: request.system }] : []),
              { role: 'user' as const, content: request.prompt },
            ],
            ...(request.schema
              ? {
                  response_format: {
                    type: 'json_schema' as const,
                    json_schema: { name: schemaName(request.task), schema: request.schema, strict: false },
                  },
                }
              : {}),
          },
          request.signal ? { signal: request.signal } : {},
        );
        const choice = response.choices?.[0];
        if (!choice) throw new ModelCallError('OpenAI returned no choices', { retryable: false });
        if (choice.finish_reason === 'content_filter')
          throw new ModelCallError('OpenAI withheld the reply (content_filter)', { retryable: false });
        return {
          text: choice.message?.content ?? choice.message?.refusal ?? '',
          usage: toUsage(response.usage ?? {}),
          model: response.model ?? model,
        };
      } catch (error) {
        throw toSdkError(error, errorContext);
      }
    },
  };
}
