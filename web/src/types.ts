// Wire shapes: the zod-inferred types the API itself uses (type-only imports, so nothing is bundled from
// the server and nothing is written twice), plus the few the web client reads from newer endpoints.
export type {
  AgentName,
  ChatMessage,
  ConversationStatus,
  DecisionInput,
  PendingItem,
  PendingOption,
  TurnResult,
  Usage,
} from '../../src/shared/messages.ts';
import type { AgentName, ChatMessage, ConversationStatus, PendingItem, Usage } from '../../src/shared/messages.ts';

export interface ConversationSummary {
  id: string;
  agent: AgentName;
  workflowId: string;
  title: string;
  createdAt: string;
  /** newer servers say whether it waits for a person */
  status?: ConversationStatus;
  waiting?: boolean;
  client?: string | null;
}

export interface ConversationView extends ConversationSummary {
  status: ConversationStatus;
  messages: ChatMessage[];
  pending: PendingItem[];
  usage: Usage;
  /** a stateful agent's view of its state (sous: recipe, defaults) */
  agentState?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
}

export interface ToolInfo {
  name: string;
  description: string;
  approval: boolean;
  parameters: JsonSchema;
}

export interface AgentInfo {
  name: AgentName;
  requiredRole: string | null;
  allowed: boolean;
  asksForClient: boolean;
  stateful?: boolean;
  tools: ToolInfo[];
}

export interface Meta {
  user: string;
  roles: string[];
  client: string | null;
  model: string;
  temporal: { namespace: string; uiUrl: string | null; workflowUrlTemplate: string | null };
  agents: AgentInfo[];
}

export interface StreamEvent {
  id: number;
  type: string;
  data: any;
  createdAt?: string;
}
