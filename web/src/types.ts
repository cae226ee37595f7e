// Wire shapes: the zod-inferred types the API itself uses (type-only imports, so nothing is bundled from
// the server and nothing is written twice), plus the few the web client reads from newer endpoints.
export type {
  AgentName,
  ChatMessage,
  ConversationStatus,
  DecisionInput,
  PendingItem,
  PendingKind,
  PendingOption,
  TurnResult,
  Usage,
} from '../../src/shared/messages.ts';
import type { AgentName, ChatMessage, ConversationStatus, PendingItem, Usage } from '../../src/shared/messages.ts';
import type { BudgetView } from '../../src/api/budget-view.ts';
import type { ConversationViewStatus, SiblingsView } from '../../src/api/schemas.ts';
import type { z } from 'zod';

/** where a message of the current branch stands among its versions (edits, regenerated answers) */
export type Siblings = z.infer<typeof SiblingsView>;

export interface ConversationSummary {
  id: string;
  agent: AgentName;
  workflowId: string;
  title: string;
  createdAt: string;
  /** its newest event or message: the list's order (servers before issue 46 leave it out) */
  lastActivityAt?: string;
  /** newer servers say whether it waits for a person */
  status?: ConversationStatus;
  waiting?: boolean;
  client?: string | null;
  /** a search's find: the words around it in the person's newest message that has it */
  match?: string;
}

export interface ConversationView extends Omit<ConversationSummary, 'status'> {
  /** `interrupted`: its run ended or is stuck; the page still shows it, and the next message revives it */
  status: ConversationViewStatus;
  /** the current branch, from the first message to the leaf */
  messages: (ChatMessage & { parentId?: string | null; siblings?: Siblings })[];
  pending: PendingItem[];
  /** cost: what every model call of the conversation cost (its pipelines' and tools' calls too), from the server's price table */
  usage: Usage & { cost?: { amount: number; currency: string } };
  /** spending against the budgets (tokens, money), when the deployment sets one */
  budget?: BudgetView;
  /** whether the agent's model reads a summary of the messages through `throughMessageId` instead of them */
  context?: { summarized: boolean; throughMessageId?: string };
  /** a message the conversation holds (sent with pending "keep"): the next turn once this one ends */
  held?: { id: string; text: string };
  /** a stateful agent's view of its state, beside the fields above; only that agent's home reads them */
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
  /** what an MCP question's form (elicitation) also reads: labels, defaults, titled choices, lengths and counts */
  title?: string;
  default?: unknown;
  enumNames?: string[];
  oneOf?: JsonSchema[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

/** GET /v1/meta, as the API declares it */
export type { MetaBody as Meta } from '../../src/api/meta.ts';
import type { MetaBody } from '../../src/api/meta.ts';
export type AgentInfo = MetaBody['agents'][number];
export type ToolInfo = AgentInfo['tools'][number];

export interface StreamEvent {
  /** absent on a live delta, which is not in the table */
  id?: number;
  type: string;
  data: any;
  createdAt?: string;
}
