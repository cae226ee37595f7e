import type pg from 'pg';

export interface ToolContext {
  /** a client inside the transaction that also records the call, so the effect and its record commit together */
  db: pg.ClientBase;
  userId: string;
  conversationId: string;
  callId: string;
  client?: string;
}

/**
 * Runs a tool whose arguments are already validated against its schema. Contract errors (not found,
 * can't cancel) are results such as `{ error }`; a thrown error means infrastructure failed and is retried.
 */
export type ToolImplementation = (args: any, context: ToolContext) => Promise<unknown>;
