// Anthropic's Messages API over the official `@anthropic-ai/sdk`: streamed (SSE events), tool_use blocks for
// tool calls, usage from message_start and message_delta. Structured output (sous) is a forced tool whose input
// schema is the answer's schema: every Claude model supports it, and its input is JSON by construction.
// One call is one HTTP request (maxRetries: 0), as for Gemini.
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, RawMessageStreamEvent, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { JsonObject } from '../shared/messages.ts';
import { STOPPED_NOTE } from '../shared/turn-control.ts';
import { CONTEXT_MARKER } from './gemini.ts';
import { pairedTranscript, resultText } from './paired-transcript.ts';
import { toSdkError } from './sdk-errors.ts';
import { sortedKeys } from '../shared/sorted-keys.ts';
import type { TaskModel } from './task-model.ts';
import { type ChatModel, ModelCallError, type ModelReply, type ModelRequest, type ModelUsage, type ToolDeclaration } from './types.ts';

export interface AnthropicOptions {
  apiKey: string;
  /** another Messages-API endpoint (a proxy, or the tests' scripted server); without /v1 */
  baseUrl?: string;
  model: string;
  timeoutMs?: number;
  /** max_tokens, which the Messages API requires */
  maxTokens?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_TOKENS = 8192;
const PROVIDER = 'Anthropic';
/** The forced tool that carries a structured answer. */
export const ANSWER_TOOL = 'structured_answer';

export function createAnthropicClient(opts: AnthropicOptions): Anthropic {
  return new Anthropic({
    apiKey: opts.apiKey,
    // explicit, so ANTHROPIC_BASE_URL in the environment is read once, by the config
    baseURL: opts.baseUrl ?? 'https://api.anthropic.com',
    maxRetries: 0,
    timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

export function createAnthropicModel(opts: AnthropicOptions): ChatModel {
  const client = createAnthropicClient(opts);
  const errorContext = { provider: PROVIDER, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  return {
    name: opts.model,
    async generate(request: ModelRequest): Promise<ModelReply> {
      let callbackFailure: { error: unknown } | undefined;
      const tools = [...toTools(request.tools), ...(request.output ? [answerTool(request.output.schema)] : [])];
      const system = [request.system, ...(request.context ? [`${CONTEXT_MARKER}\n${JSON.stringify(sortedKeys(request.context))}`] : [])]
        .filter(Boolean)
        .join('\n\n');
      try {
        const stream = await client.messages.create(
          {
            model: opts.model,
            max_tokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
            ...(system ? { system } : {}),
            messages: toAnthropicMessages(request.messages),
            ...(tools.length ? { tools } : {}),
            ...(request.output
              ? { tool_choice: request.tools.length ? { type: 'any' as const } : { type: 'tool' as const, name: ANSWER_TOOL } }
              : {}),
            stream: true,
          },
          request.signal ? { signal: request.signal } : {},
        );
        let text = '';
        let model: string | undefined;
        let stopReason: string | null | undefined;
        let input = 0;
        let output = 0;
        let cached = 0;
        const blocks = new Map<number, { name: string; json: string; input?: unknown }>();
        const calls: { index: number; name: string; json: string; input?: unknown }[] = [];
        const report = () => request.onUsage?.(usage(input, output, cached));
        for await (const event of stream as AsyncIterable<RawMessageStreamEvent>) {
          request.onPiece?.();
          switch (event.type) {
            case 'message_start': {
              model = event.message.model;
              const u = event.message.usage;
              input = (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
              cached = u.cache_read_input_tokens ?? 0;
              output = u.output_tokens ?? 0;
              report();
              break;
            }
            case 'content_block_start':
              // a server that sends the input whole in the start (no input_json_delta) is read too
              if (event.content_block.type === 'tool_use')
                blocks.set(event.index, { name: event.content_block.name, json: '', input: event.content_block.input });
              else if (event.content_block.type === 'text' && event.content_block.text) text += deliver(event.content_block.text);
              break;
            case 'content_block_delta':
              if (event.delta.type === 'text_delta') text += deliver(event.delta.text);
              else if (event.delta.type === 'input_json_delta') {
                const block = blocks.get(event.index);
                if (block) block.json += event.delta.partial_json;
              }
              break;
            case 'content_block_stop': {
              const block = blocks.get(event.index);
              if (block) calls.push({ index: event.index, ...block });
              break;
            }
            case 'message_delta':
              stopReason = event.delta.stop_reason ?? stopReason;
              // cumulative: the last message_delta counts the whole reply
              if (event.usage.output_tokens != null) output = event.usage.output_tokens;
              if (event.usage.input_tokens != null) {
                input =
                  event.usage.input_tokens + (event.usage.cache_creation_input_tokens ?? 0) + (event.usage.cache_read_input_tokens ?? 0);
                cached = event.usage.cache_read_input_tokens ?? cached;
              }
              report();
              break;
            default:
              break;
          }
        }
        if (stopReason === 'refusal') throw new ModelCallError('Anthropic refused to reply (stop_reason refusal)', { retryable: false });
        let toolCalls = calls.map(readCall);
        const answer = request.output ? toolCalls.find((call) => call.name === ANSWER_TOOL) : undefined;
        if (answer) {
          text = answerText(request.output!.schema, answer.args);
          toolCalls = toolCalls.filter((call) => call !== answer);
        }
        if (stopReason === 'max_tokens' && !text && toolCalls.length === 0) {
          throw new ModelCallError('Anthropic ran out of output tokens before it replied', { retryable: false });
        }
        if (!stopReason && !text && toolCalls.length === 0)
          throw new ModelCallError('Anthropic closed the stream before it replied', { retryable: true });
        return { text, toolCalls, usage: usage(input, output, cached), model: model ?? opts.model };
      } catch (error) {
        if (callbackFailure && error === callbackFailure.error) throw error;
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        throw toSdkError(error, errorContext);
      }

      function deliver(piece: string): string {
        try {
          request.onText?.(piece);
        } catch (error) {
          callbackFailure = { error };
          throw error;
        }
        return piece;
      }
    },
  };
}

/**
 * The transcript as Messages: it must start with a user turn and alternate, so adjacent turns of one role are
 * merged, and each run of tool results is one user turn of tool_result blocks.
 */
export function toAnthropicMessages(messages: Parameters<typeof pairedTranscript>[0]): MessageParam[] {
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last && last.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of pairedTranscript(messages)) {
    if (message.role === 'user') push('user', [{ type: 'text', text: message.text || '(empty message)' }]);
    else if (message.role === 'tool')
      push('user', [{ type: 'tool_result', tool_use_id: toolUseId(message.callId!), content: resultText(message) }]);
    else {
      const text = message.stopped ? `${message.text}\n\n${STOPPED_NOTE}`.trim() : message.text;
      push('assistant', [
        ...(text ? [{ type: 'text' as const, text }] : []),
        ...(message.toolCalls ?? []).map((call) => ({
          type: 'tool_use' as const,
          id: toolUseId(call.id),
          name: call.name,
          input: sortedKeys(call.args),
        })),
      ]);
    }
  }
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [{ type: 'text', text: '(The conversation starts.)' }] });
  return out;
}

/** tool_use ids must match ^[a-zA-Z0-9_-]+$; the runtime's are `<step uuid>.<n>`. */
function toolUseId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function toTools(declarations: readonly ToolDeclaration[]): Tool[] {
  return declarations.map((d) => ({ name: d.name, description: d.description, input_schema: d.parameters as Tool['input_schema'] }));
}

function answerTool(schema: JsonObject): Tool {
  // input_schema must be an object schema; a non-object answer travels as { value }
  const objectSchema = schema.type === 'object' ? schema : { type: 'object', properties: { value: schema }, required: ['value'] };
  return {
    name: ANSWER_TOOL,
    description: 'Give your answer: its input is the answer, in exactly this schema.',
    input_schema: objectSchema as Tool['input_schema'],
  };
}

function answerText(schema: JsonObject, input: JsonObject): string {
  return JSON.stringify(schema.type === 'object' ? input : input.value);
}

function readCall(call: { name: string; json: string; input?: unknown }): { name: string; args: JsonObject } {
  let args: unknown;
  try {
    args = call.json.trim() ? JSON.parse(call.json) : (call.input ?? {});
  } catch {
    throw new ModelCallError(`Anthropic returned input for ${call.name} that is not JSON`, { retryable: false });
  }
  if (!args || typeof args !== 'object' || Array.isArray(args))
    throw new ModelCallError(`Anthropic returned non-object input for ${call.name}`, { retryable: false });
  return { name: call.name, args: args as JsonObject };
}

/** Anthropic counts a request in three parts: input_tokens, cache_creation_input_tokens and cache_read_input_tokens (the cached part). */
function usage(inputTokens: number, outputTokens: number, cachedInputTokens = 0): ModelUsage {
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, ...(cachedInputTokens ? { cachedInputTokens } : {}) };
}

/** One-shot tasks over the Messages API; a schema is a forced answer tool. Grounding and images: see select.ts. */
export function createAnthropicTaskModel(opts: AnthropicOptions): Omit<TaskModel, 'image'> {
  const client = createAnthropicClient(opts);
  const errorContext = { provider: PROVIDER, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  return {
    name: opts.model,
    offline: false,
    async complete(request) {
      const model = request.model ?? opts.model;
      try {
        const response = await client.messages.create(
          {
            model,
            max_tokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
            ...(request.system ? { system: request.system } : {}),
            messages: [{ role: 'user', content: request.prompt }],
            ...(request.schema ? { tools: [answerTool(request.schema)], tool_choice: { type: 'tool' as const, name: ANSWER_TOOL } } : {}),
          },
          request.signal ? { signal: request.signal } : {},
        );
        if (response.stop_reason === 'refusal')
          throw new ModelCallError('Anthropic refused to reply (stop_reason refusal)', { retryable: false });
        const answer = response.content.find((block) => block.type === 'tool_use' && block.name === ANSWER_TOOL);
        const text =
          answer && answer.type === 'tool_use'
            ? answerText(request.schema!, answer.input as JsonObject)
            : response.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        const u = response.usage;
        return {
          text,
          usage: usage(
            (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
            u.output_tokens ?? 0,
            u.cache_read_input_tokens ?? 0,
          ),
          model: response.model ?? model,
        };
      } catch (error) {
        throw toSdkError(error, errorContext);
      }
    },
  };
}
