import type pg from 'pg';
import type { z } from 'zod';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { Config } from '../config.ts';
import type { TaskModel } from '../model/task-model.ts';

export interface ToolContext {
  /** a client inside the transaction that also records the call, so the effect and its record commit together */
  db: pg.ClientBase;
  userId: string;
  conversationId: string;
  callId: string;
  client?: string;
  /** what a tool may use besides its transaction: settings, one-shot model calls, the pool (for work that
   * must not share the recording transaction, such as a guarded query under another role) */
  services: { config: Config; taskModel: TaskModel; pool: pg.Pool };
  /** aborted when the activity is cancelled (Stop pressed, the worker shutting down): a tool that waits on
   * the network may give up early; one that only runs its transaction can ignore it */
  signal?: AbortSignal;
}

/**
 * Runs a tool whose arguments are already validated against its schema. Contract errors (not found,
 * can't cancel) are results such as `{ error }`; a thrown error means infrastructure failed and is retried.
 */
export type ToolImplementation = (args: any, context: ToolContext) => Promise<unknown>;

/** What a preview lookup gets: a read-only transaction acting for the conversation's user. */
export interface PreviewContext {
  db: pg.ClientBase;
  userId: string;
  conversationId: string;
}

/**
 * A tool's approval preview: what the call would touch, looked up read-only before its approval opens
 * (PendingItem.preview); undefined when there is nothing to show (the order does not exist).
 */
export type ApprovalPreview = (args: any, context: PreviewContext) => Promise<Record<string, unknown> | undefined>;

/**
 * What an agent's home must implement for its tool list: one function per tool that runs as an activity,
 * named as the tool and taking the arguments its schema infers. A missing tool, an extra one or another
 * argument type fails to compile; child-workflow tools have none.
 */
export type ToolImplementations<Tools extends readonly ToolSpec<any, string>[]> = {
  [T in Tools[number] as T extends { runner: { kind: 'child' } } ? never : T['name']]: (
    args: z.infer<T['args']>,
    context: ToolContext,
  ) => Promise<unknown>;
};
