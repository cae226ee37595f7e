// What every process knows of an agent, the workflow included: plain data and pure functions (zod, no I/O),
// so the workflow bundle can import it. The server side of an agent (routes, activities, tool
// implementations) is its AgentServer (src/api/agent-server.ts). A composition root lists them in a catalog.
import type { z } from 'zod';
import type { AgentKernel } from './agent-kernel.ts';
import type { PendingKindSpec } from './pending-kinds.ts';
import type { ToolSpec } from './tool-spec.ts';

export interface AgentSpec<Name extends string = string> {
  name: Name;
  tools: readonly ToolSpec[];
  /** a token must carry this role to open a conversation with the agent */
  requiredRole?: string;
  /**
   * A conversation with it is for a client (a bar): a token with a client opens it for that client; a
   * token without one needs this role and names the client when it starts one.
   */
  clientRole?: string;
  /** an agent that keeps state of its own and answers in JSON (sous) */
  kernel?: AgentKernel;
  /** kinds of pending item it opens besides the runtime's (approval, confirmation), and what they mean */
  pendingKinds?: Readonly<Record<string, PendingKindSpec>>;
  /** the tokens its model steps may send, over MODEL_CONTEXT_TOKENS (an agent whose context must stay small or may be large) */
  contextTokens?: number;
  /** the event types it writes besides the runtime's, with their data's schema (the catalog checks none is shared) */
  events?: Readonly<Record<string, z.ZodType>>;
}

// The name's literal type is kept, for the agent's own code.
export const defineAgent = <const Name extends string>(spec: AgentSpec<Name>): AgentSpec<Name> => spec;
