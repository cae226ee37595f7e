// The seam between the model activity and any model: Gemini over @google/genai, or the offline model.
import type { ChatMessage, JsonObject } from '../shared/messages.ts';

/** A function the model may call: JSON Schema made from the tool's zod schema. */
export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: JsonObject;
}

export interface ModelRequest {
  /** the agent's system prompt (from prompts/<agent>.txt) */
  system: string;
  /** the whole transcript, oldest first */
  messages: ChatMessage[];
  tools: readonly ToolDeclaration[];
  /** structured context beside the transcript (a stateful agent's state); never part of a user message */
  context?: JsonObject;
  /** the reply must be JSON of this schema (made from a zod schema); `name` picks the offline responder */
  output?: { name: string; schema: JsonObject };
  /** called with each streamed piece of text as it arrives */
  onText?: (delta: string) => void;
  /** called with the usage so far whenever the stream reports it (so a stopped reply's tokens still count) */
  onUsage?: (usage: ModelUsage) => void;
  /** called as each chunk of the stream arrives, whatever it holds (text, a call's arguments, thoughts, usage) */
  onPiece?: () => void;
  signal?: AbortSignal;
  /**
   * a regenerate's seed (issue 45): the same message answered again, so a model may answer otherwise; the offline
   * model words its answer another way for each seed
   */
  seed?: string;
}

export interface ModelUsage {
  /** every token of the request, those read from a cache included */
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /**
   * the part of `inputTokens` the provider read from its context cache (implicit or explicit), as it reported
   * it; absent when it reported none. Providers bill these at a lower rate.
   */
  cachedInputTokens?: number;
}

export interface ModelReply {
  text: string;
  /** unvalidated: the runtime checks names and arguments against the tools' schemas */
  toolCalls: { name: string; args: JsonObject }[];
  usage: ModelUsage;
  model: string;
}

export interface ChatModel {
  readonly name: string;
  generate(request: ModelRequest): Promise<ModelReply>;
}

/** A failed model call, already sorted into what a retry can fix and what it cannot. */
export class ModelCallError extends Error {
  override name = 'ModelCallError';
  readonly status: number | undefined;
  readonly retryable: boolean;
  constructor(message: string, options: { status?: number; retryable: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable;
  }
}
