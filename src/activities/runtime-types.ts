// The runtime's activity signatures, imported as types by the workflow (no code crosses into the bundle).
import type { AgentName, ChatMessage, JsonObject, NewEvent } from '../shared/messages.ts';

export interface ConversationRef {
  conversationId: string;
  userId: string;
}

export interface ModelStepInput extends ConversationRef {
  agent: AgentName;
  /** also the id of the assistant message it writes, so a retry finds its own earlier answer */
  stepId: string;
  /** written before the transcript is read: the user message, refused tool calls, events */
  messages: ChatMessage[];
  events: NewEvent[];
  /** a stateful agent's structured context for the model (its kernel's context()) */
  context?: JsonObject;
}

export interface StepUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface ModelStepResult {
  message: ChatMessage;
  usage: StepUsage;
}

export interface RunToolInput extends ConversationRef {
  agent: AgentName;
  client?: string;
  callId: string;
  tool: string;
  args: JsonObject;
}

export interface RecordInput extends ConversationRef {
  messages: ChatMessage[];
  events: NewEvent[];
}

export interface RuntimeActivities {
  modelStep(input: ModelStepInput): Promise<ModelStepResult>;
  runTool(input: RunToolInput): Promise<unknown>;
  record(input: RecordInput): Promise<void>;
}
