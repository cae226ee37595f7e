// What crosses between the MCP activities and the workflow: plain data, imported as types by the workflow.
import type { ConversationRef } from '../shared/conversation-ref.ts';
import type { AgentName, JsonObject } from '../shared/messages.ts';
import type { ToolPolicy } from '../shared/tool-spec.ts';

/** One MCP tool as an agent sees it, with the policy the config gives it. */
export interface McpToolDescriptor {
  /** what the model calls it: `<server>__<tool>` (src/mcp/names.ts) */
  name: string;
  server: string;
  /** the server's own name for it */
  tool: string;
  description: string;
  /** the declaration Gemini is given (src/mcp/schema.ts) */
  parameters: JsonObject;
  /** the server's inputSchema as it is: what calls and edits are checked against */
  inputSchema: JsonObject;
  readOnly: boolean;
  policy: ToolPolicy;
  /** the server's call timeout, question deadline and attempts (BRIGADE_MCP_CONFIG) */
  callTimeoutMs: number;
  questionDeadlineMs: number;
  maxAttempts: number;
}

/** A server's tools; `hash` names this version of the list, `error` says why a server gave none. */
export interface McpServerTools {
  server: string;
  hash: string;
  tools: McpToolDescriptor[];
  /** the list is the one the workflow already has (its hash was given): `tools` is empty */
  unchanged?: boolean;
  error?: string;
}

export interface McpListToolsInput {
  agent: AgentName;
  servers: string[];
  /** the hash of each list the workflow holds: an unchanged list is not sent again */
  known?: Record<string, string>;
}

export interface McpCallInput extends ConversationRef {
  agent: AgentName;
  callId: string;
  /** the name the model used */
  name: string;
  server: string;
  tool: string;
  args: JsonObject;
  /** the hash of the server's list the workflow holds, to learn whether it changed */
  listHash?: string;
}

export interface McpCallResult {
  /** what the model gets as the tool's result (an error is a result too) */
  result: JsonObject;
  /** the server's tool list changed since `listHash`: list again before the next model step */
  toolsChanged?: boolean;
}

/** An elicitation the activity asks the workflow to put to the user (a pending `question`). */
export interface McpQuestionRequest {
  /** the item's id; also what the activity polls for */
  requestId: string;
  callId: string;
  /** the name the model used for the tool that asks */
  tool: string;
  server: string;
  message: string;
  /** the JSON Schema the answer must fit (MCP's requestedSchema) */
  schema: JsonObject;
  deadlineMs: number;
}

/** How the user answered (MCP's elicitation result). */
export interface McpQuestionAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: JsonObject;
}

export interface McpActivities {
  mcpListTools(input: McpListToolsInput): Promise<McpServerTools[]>;
  mcpCallTool(input: McpCallInput): Promise<McpCallResult>;
}
