// A stateful agent's own state (sous: its recipe and PatchSets) inside the conversation. The kernel is pure
// and knows nothing of Temporal; this applies what it decides to the pending items and the event log, and
// turns its refusals into the failures the API maps to statuses. For an agent without a kernel it holds
// nothing and every call is a no-op. Pure: ids, clock and logger are given, so it is tested without Temporal.
import type { z } from 'zod';
import type { AgentKernel, KernelContext, KernelEffects } from '../shared/agent-kernel.ts';
import { KernelRefusal } from '../shared/agent-kernel.ts';
import { describeError } from '../shared/log-safe.ts';
import type { ChatMessage, DecisionInput, JsonObject, PendingItem } from '../shared/messages.ts';
import { describeIssues } from '../shared/tool-spec.ts';
import type { EventLog } from './event-log.ts';
import { fail } from './failure-text.ts';
import type { PendingItems } from './pending-items.ts';

export interface AgentStateOptions {
  kernel: AgentKernel | undefined;
  agent: string;
  /** the state carried over continue-as-new, or the kernel's initial state */
  state: unknown;
  pending: PendingItems;
  events: EventLog;
  /** the event types the agent declares (AgentSpec.events) with their data's schema: what its kernel may write */
  declaredEvents?: Readonly<Record<string, z.ZodType>>;
  /** deterministic ids (uuid4 in the workflow) */
  newId(): string;
  /** the workflow's clock (Date.now is deterministic in a workflow) */
  now?: () => number;
  logError(message: string, attributes: Record<string, unknown>): void;
  /**
   * Keeps the state beside the transcript, keyed by the last message it follows (an answer, or what the kernel
   * said): what a branch switch, an edit, a regenerate or a fork resumes from (issue 45).
   */
  snapshot?(messageId: string, state: unknown): void;
}

export class AgentState {
  readonly kernel: AgentKernel | undefined;
  #state: unknown;
  readonly #options: AgentStateOptions;

  constructor(options: AgentStateOptions) {
    this.kernel = options.kernel;
    this.#state = options.state;
    this.#options = options;
  }

  get state(): unknown {
    return this.#state;
  }

  #now(): number {
    return this.#options.now ? this.#options.now() : Date.now();
  }

  #context(): KernelContext {
    return {
      newId: this.#options.newId,
      now: () => new Date(this.#now()).toISOString(),
      openItems: this.#options.pending.items(),
    };
  }

  /** what the model gets besides the transcript */
  modelContext(): JsonObject | undefined {
    return this.kernel?.context(this.#state);
  }

  /** what clients see of the state */
  view(): JsonObject | undefined {
    return this.kernel?.view(this.#state, this.#options.pending.items());
  }

  /** Applies what a kernel call decided, in the kernel's order (close, open, record); returns the assistant messages it said. */
  apply(effects: KernelEffects<unknown>, after?: string): ChatMessage[] {
    const { pending, events, newId } = this.#options;
    this.#state = effects.state;
    for (const { id, reason } of effects.close ?? []) {
      const entry = pending.get(id);
      if (entry) pending.close(entry, reason, { pendingId: id, decision: 'reject', reason: `closed: ${reason}` });
    }
    if (effects.open) {
      const { deadlineMs, id, ...rest } = effects.open;
      const item: PendingItem = {
        ...rest,
        id: id ?? newId(),
        ...(deadlineMs ? { expiresAt: new Date(this.#now() + deadlineMs).toISOString() } : {}),
      };
      pending.open(item);
    }
    for (const event of effects.events ?? []) this.#checkEvent(event.type, event.data);
    events.event(...(effects.events ?? []));
    const said = (effects.say ?? []).map((text): ChatMessage => ({ id: newId(), role: 'assistant', text }));
    events.message(...said);
    pending.syncWaiting();
    const at = said.at(-1)?.id ?? after;
    if (at && this.kernel) this.#options.snapshot?.(at, this.#state);
    return said;
  }

  /** Another branch became current (issue 45): the state becomes the one kept with its path's last answer. */
  restore(kept: unknown): void {
    const resume = this.kernel?.resume;
    this.#state = resume ? this.#call(() => resume(kept, this.#state)) : kept;
  }

  /**
   * An event the agent did not declare, or whose data does not fit its schema, is a bug of the agent's: it is
   * logged, not thrown, so a conversation (and the replay of its history) never stops on a write it made.
   */
  #checkEvent(type: string, data: unknown): void {
    const schema = this.#options.declaredEvents?.[type];
    if (!schema) {
      this.#options.logError('A kernel wrote an event type its agent does not declare', { agent: this.#options.agent, type });
      return;
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      this.#options.logError("A kernel wrote an event whose data does not fit the agent's schema", {
        agent: this.#options.agent,
        type,
        issues: describeIssues(parsed.error),
      });
  }

  /**
   * A kernel's refusal becomes the failure the API maps to its status; any other error is reported as a
   * conflict, since an exception escaping a handler would fail the workflow task again and again.
   */
  #call<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof KernelRefusal) throw fail(error.type, error.message);
      this.#options.logError('A kernel call failed', { reason: describeError(error) });
      throw fail('Conflict', 'The agent could not apply that decision to its state.');
    }
  }

  /** After a valid structured answer of the model; a kernel error fails the turn, not a handler. */
  onAnswer(structured: unknown, replyId?: string): ChatMessage[] {
    return this.apply(this.kernel!.onAnswer(this.#state, structured, this.#context()), replyId);
  }

  /**
   * Records a checked decision. A turn-scoped item is left to its turn (undefined); any other item is
   * settled here, by the kernel, at once, and the messages it said are returned.
   */
  decide(decision: DecisionInput): ChatMessage[] | undefined {
    const { kernel } = this;
    // The kernel decides before anything changes, so a refusal leaves the item open and the state as it was.
    const outcome = this.#options.pending.decide(decision, (entry) =>
      kernel ? this.#call(() => kernel.onDecision(this.#state, entry.item, decision, this.#context())) : undefined,
    );
    if (!outcome.settled) return undefined;
    return outcome.value ? this.apply(outcome.value) : [];
  }

  /** Refuses, as the API's failure, an action that would not apply; runs it on a dry context to find out. */
  checkAction(name: string, args: unknown): void {
    const action = this.kernel?.actions[name];
    if (!action) throw fail('NotFound', `The ${this.#options.agent} agent has no action "${String(name).slice(0, 80)}".`);
    const parsed = action.args.safeParse(args);
    if (!parsed.success) throw fail('BadInput', `Invalid action: ${describeIssues(parsed.error)}`);
    try {
      action.apply(this.#state, parsed.data, {
        newId: () => 'dry-run',
        now: () => new Date(this.#now()).toISOString(),
        openItems: this.#options.pending.items(),
      });
    } catch (error) {
      if (error instanceof KernelRefusal) throw fail(error.type, error.message);
      throw error;
    }
  }

  /** Runs an action checkAction accepted. */
  act(name: string, args: unknown): void {
    const action = this.kernel!.actions[name]!;
    this.apply(this.#call(() => action.apply(this.#state, action.args.parse(args), this.#context())));
  }
}
