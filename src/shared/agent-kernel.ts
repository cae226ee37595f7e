// A stateful agent (sous) plugs into chatSession through a kernel: pure functions over its own state that
// the workflow calls at fixed points. The workflow knows nothing of recipes or PatchSets; the kernel knows
// nothing of Temporal. Kernels are plain modules (zod and data only), imported by the workflow, the model
// activity (for the output schema) and the API (for validating actions and views).
import type { z } from 'zod';
import type { FailureType } from './failures.ts';
import type { ClosedReason, DecisionInput, JsonObject, NewEvent, PendingItem } from './messages.ts';

/** An item the kernel wants open; the workflow gives it an id and owns its life. */
export type KernelItem = Omit<PendingItem, 'id' | 'expiresAt'> & { id?: string; deadlineMs?: number };

/** What a kernel call changes. Everything is applied by the workflow, in this order: close, open, record. */
export interface KernelEffects<S> {
  state: S;
  /** assistant messages to add to the transcript (a decision's acknowledgement, for example) */
  say?: string[];
  /** events for the conversation's log (keys must be unique per conversation: use ctx.newId()) */
  events?: NewEvent[];
  /** items to close, and what they became */
  close?: { id: string; reason: ClosedReason }[];
  /** an item to open (conversation-scoped kinds only) */
  open?: KernelItem;
}

export interface KernelContext {
  /** deterministic ids (uuid4 in the workflow) */
  newId(): string;
  /** the workflow's clock, as ISO text */
  now(): string;
  /** the conversation's open items */
  openItems: readonly PendingItem[];
}

/** Thrown by a kernel to refuse an action or decision; the API maps `type` to a status (404, 409, 422). */
export class KernelRefusal extends Error {
  override name = 'KernelRefusal';
  readonly type: FailureType;
  constructor(type: FailureType, message: string) {
    super(message);
    this.type = type;
  }
}

export interface KernelAction<S, A extends z.ZodType = z.ZodType> {
  args: A;
  /** throws KernelRefusal when the action cannot apply (unknown step: NotFound) */
  apply(state: S, args: z.infer<A>, ctx: KernelContext): KernelEffects<S>;
}

export interface AgentKernel<S = any> {
  /** the state a conversation starts from (ChatSessionInput.init, already validated by the API) */
  init(init: JsonObject | undefined): S;
  /** what the model gets besides the transcript, as structured context (never pasted into user text) */
  context(state: S): JsonObject;
  /** what clients see of the state (GET /v1/conversations/:id, the state query) */
  view(state: S, openItems: readonly PendingItem[]): JsonObject;
  /** the JSON the model must answer with (a response schema is made from it) and the text to show */
  output: { schema: z.ZodType; text(answer: any): string };
  /** after a valid structured answer */
  onAnswer(state: S, answer: any, ctx: KernelContext): KernelEffects<S>;
  /** a decision on one of the kernel's conversation-scoped items */
  onDecision(state: S, item: PendingItem, decision: DecisionInput, ctx: KernelContext): KernelEffects<S>;
  /**
   * Another branch became current (issue 45): the state to go on from, given the one kept with its path's last answer
   * and the one held now. What each agent keeps across branches is its rule (docs/agents/<agent>.md); absent, the kept
   * state as it is. Items the left branch waited on are withdrawn before it is called.
   */
  resume?(kept: S, current: S): S;
  /** named actions clients may take on the state outside a turn (sous: markStepDone) */
  actions: Record<string, KernelAction<S, any>>;
}
