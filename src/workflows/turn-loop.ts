// The turn loop: a user message starts a turn, which asks the model, runs or refuses the tools it calls,
// and asks again until the model answers without tools or a limit stops it. What the turn does next is the
// state machine's (turn-machine.ts); this is its driver. A turn runs detached from the handler that started
// it, so it can park on a pending item (the handler returns with the item) and go on when a decision arrives
// (the handler that brought it waits for the next boundary). Everything Temporal does for it (activities,
// child workflows, timers, details) comes in as ports, so the loop is tested without a worker; the workflow
// passes the SDK's own functions (turn-ports.ts), which keeps its commands and their order.
import type { ModelStepResult } from '../activities/runtime-types.ts';
import type { ChildToolOutput } from '../shared/child-tool.ts';
import { describeError } from '../shared/log-safe.ts';
import type {
  ChatMessage,
  ConversationStatus,
  DecisionInput,
  DecisionName,
  DeclinedItem,
  HeldMessage,
  JsonObject,
  NewEvent,
  PendingItem,
  SessionSettings,
  ToolCall,
  TurnResult,
  Usage,
} from '../shared/messages.ts';
import { boundTurnResult, summaryLine } from '../shared/payload-bounds.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { AgentState } from './agent-state.ts';
import type { EventLog } from './event-log.ts';
import type { ItemOutcome, OpenItem, PendingItems } from './pending-items.ts';
import type { BudgetAllowance } from '../shared/turn-control.ts';
import { budgetItem } from './budget.ts';
import { type TurnScope, TurnStopped, plainScope, stoppedStepOf } from './stop.ts';
import {
  type TurnCommand,
  type TurnEvent,
  type TurnRules,
  type TurnState,
  answerTo,
  idleState,
  nextStep,
  statusOf,
} from './turn-machine.ts';

/** The SDK's condition(fn) and condition(fn, timeout) */
export interface Condition {
  (fn: () => boolean): Promise<void>;
  (fn: () => boolean, timeoutMs: number): Promise<boolean>;
}

/** What one model step is given besides the conversation's identity. */
export interface ModelRequest {
  stepId: string;
  /** a stateful agent's structured context */
  context?: JsonObject;
  /** how many more model calls the step may make running tools that need no person (0: none) */
  extraSteps: number;
  /** what is unsaved, written by the step before it reads the transcript */
  messages: ChatMessage[];
  events: NewEvent[];
  /** budget approvals so far (absent: none) */
  budget?: BudgetAllowance;
  /** when the turn began (workflow time): the Stop a user asks for after it stops the step */
  turnStartedAt: number;
  /** the turn answers again a message answered before (a regenerate) */
  regenerate?: boolean;
}

export interface TurnLoopPorts {
  settings: Pick<SessionSettings, 'maxSteps' | 'maxToolErrors' | 'inlineTools' | 'approvalTimeoutMs'>;
  pending: PendingItems;
  events: EventLog;
  agent: AgentState;
  /** the agent's tools, and one by name */
  tools: readonly ToolSpec[];
  findTool(name: string): ToolSpec | undefined;
  /** the modelStep activity */
  modelStep(summary: string, request: ModelRequest): Promise<ModelStepResult>;
  /** the runTool local activity */
  runTool(call: ToolCall, args: JsonObject): Promise<unknown>;
  /** a tool that is a workflow of its own; resolves with its output or the failure as a result */
  runChild(spec: ToolSpec, call: ToolCall, args: JsonObject): Promise<ChildToolOutput>;
  condition: Condition;
  /** a new scope for a turn's cancellable work, which Stop cancels (the workflow's: a CancellationScope) */
  newScope?(): TurnScope;
  /** the workflow's current details, as the Web UI shows them */
  details(text: string): void;
  newId(): string;
  now?: () => number;
  logError(message: string, attributes: Record<string, unknown>): void;
  /** what a person may be told about a failure */
  failureText(error: unknown): string;
}

/** What a run takes over from the one before it. */
export interface CarriedCounters {
  turns: number;
  usage: Usage;
  /** approved budget items, carried across continue-as-new */
  budgetRaises?: number;
}

/**
 * The driver of the turn's state machine (turn-machine.ts): it holds the one TurnState, runs the commands
 * that `nextStep` gives through the ports, and feeds back what came of them. Handlers (a message, Stop, a
 * branch move, a decision, a child's or an MCP server's question) feed their events in as they come; an event
 * that finds the turn awaiting something changes its state, and the awaited command's outcome is judged on
 * that state. Waits for a person are commands too (open, publish, a deadline timer, close, the asker's answer):
 * what an item's wait comes to is the machine's, never the driver's.
 */
export class TurnLoop {
  #state: TurnState;
  /** what Stop cancels in the current turn, and how it stops the wait for a child workflow */
  #scope: TurnScope = plainScope();
  #onStop: (() => void) | undefined;
  /** who waits for the next boundary (waitForBoundary) */
  #atBoundary: (() => void)[] = [];
  #turnStartedAt = 0;
  /** what the last declining message declined, for its answer */
  #declined: DeclinedItem[] = [];
  /** a message sent with `pending: "keep"`: the next turn, once this one ends */
  #held: ChatMessage | undefined;
  /** what the last model step found each of its reply's approvals would touch, by call id (PendingItem.preview) */
  #previews: Record<string, JsonObject> = {};
  /** the open items' books, by id, from open to close (a turn's end may close one before its wait ends) */
  readonly #entries = new Map<string, OpenItem>();
  /** who asked for an item (a child workflow, an MCP call), by id: told its outcome when its wait ends */
  readonly #askers = new Map<string, (outcome: ItemOutcome) => void>();
  /** the running turn is a regenerate (rerun) */
  #regenerating = false;
  readonly #rules: TurnRules;
  readonly #p: TurnLoopPorts;

  constructor(ports: TurnLoopPorts, carried: CarriedCounters) {
    this.#p = ports;
    this.#state = idleState({ turns: carried.turns, usage: carried.usage, budgetRaises: carried.budgetRaises ?? 0 });
    this.#rules = {
      ...ports.settings,
      stateful: Boolean(ports.agent.kernel),
      findTool: ports.findTool,
      toolNames: ports.tools.map((tool) => tool.name),
    };
  }

  /** the turn's state: what the machine knows */
  get state(): TurnState {
    return this.#state;
  }

  get budgetRaises(): number {
    return this.#state.counters.budgetRaises;
  }

  get turns(): number {
    return this.#state.counters.turns;
  }

  get turnsThisRun(): number {
    return this.#state.counters.turnsThisRun;
  }

  get usage(): Usage {
    return this.#state.counters.usage;
  }

  get active(): boolean {
    return this.#state.kind !== 'idle';
  }

  /** where a handler's share of the turn's messages starts */
  get logLength(): number {
    return this.#state.log.length;
  }

  /** the turn waits for a person: a message may answer, a decision may come */
  get parked(): boolean {
    return statusOf(this.#state) === 'waiting';
  }

  /** the conversation's status: the machine's state says it */
  status(): ConversationStatus {
    return statusOf(this.#state);
  }

  /**
   * A person decided an item (the decide update, the decision signal, or the runtime closing an MCP question
   * whose call ended): an event of the machine, which ends the turn's wait on it.
   */
  decided(decision: DecisionInput): void {
    void this.#dispatch({ type: 'decided', decision });
  }

  /** whether Stop was asked for in the running turn */
  get stopping(): boolean {
    return this.#state.kind !== 'idle' && this.#state.turn.stopping !== false;
  }

  #now(): number {
    return this.#p.now ? this.#p.now() : Date.now();
  }

  idleDetails(): void {
    const waiting = this.#p.pending.items();
    this.#p.details(
      waiting.length
        ? `Idle after ${this.turns} turn(s); waiting for a decision on ${waiting.map((item) => `${item.kind} ${item.id}`).join(', ')}.`
        : `Idle after ${this.turns} turn(s): waiting for the next message.`,
    );
  }

  /** The turn's messages from `logStart` on, once the turn ends or parks (at the next boundary). */
  waitForBoundary(logStart: number): Promise<TurnResult> {
    // Released by the dispatch that reaches the boundary, not by a condition: a condition costs the workflow
    // three more promises and one more pass into the sandbox per turn, and answers no sooner.
    const reached = new Promise<void>((resolve) => this.#atBoundary.push(resolve));
    // An Update's response over 2 MB would end the workflow: bounded, with ids to read the rest by.
    return reached.then(() =>
      boundTurnResult({
        messages: this.#state.log.slice(logStart),
        pending: this.#p.pending.items(),
        ...(this.#state.stoppedAt === this.#state.boundary ? { stopped: true } : {}),
      }),
    );
  }

  /**
   * Stop: cancels the running (or parked) turn's model step and tools, withdraws its open items and ends
   * it, keeping what it wrote. False when no turn runs; asking again while it stops changes nothing.
   */
  stop(): boolean {
    if (!this.active) return false;
    void this.#dispatch({ type: 'stop' });
    return true;
  }

  /**
   * The conversation moves to another branch: the running (parked) turn ends on the branch it belonged to as
   * Stop ends it, but its items are withdrawn and its calls answered in words of their own. False when no turn runs.
   */
  leaveBranch(): boolean {
    if (!this.active) return false;
    void this.#dispatch({ type: 'branch-left' });
    return true;
  }

  /** Resolves once the current turn has ended (at once when none runs). */
  async waitForEnd(): Promise<void> {
    if (this.active) await this.#p.condition(() => !this.active);
  }

  /**
   * A user message: starts a turn, or, while the turn is parked, answers each of its open items the way
   * its kind says (a refusal, a choice). Resolves at the next boundary with what the turn did.
   */
  receive(message: ChatMessage): Promise<TurnResult> {
    if (this.active) {
      const logStart = this.#state.log.length;
      void this.#dispatch({ type: 'message', message });
      return this.waitForBoundary(logStart);
    }
    const result = this.waitForBoundary(0);
    void this.#dispatch({ type: 'message', message });
    return result;
  }

  /** A regenerate: a turn from a user message that is stored already (the leaf is on it); at once idle only. */
  rerun(message: ChatMessage): Promise<TurnResult> {
    const result = this.waitForBoundary(0);
    this.#regenerating = true;
    void this.#dispatch({ type: 'message', message, stored: true });
    return result;
  }

  /**
   * A message sent with `pending: "decline"` while the turn is parked: the reason that declines every item
   * the turn waits on and every call of the reply that would ask next. Resolves at the next boundary with
   * what the turn did and what was declined.
   */
  decline(message: ChatMessage): Promise<TurnResult> {
    const logStart = this.#state.log.length;
    this.#declined = [];
    void this.#dispatch({ type: 'message', message, decline: true });
    return this.waitForBoundary(logStart).then((result) => ({ ...result, declined: this.#declined }));
  }

  /** the message held for the next turn, if any */
  get held(): HeldMessage | undefined {
    return this.#held && { id: this.#held.id, text: this.#held.text };
  }

  /**
   * A message sent with `pending: "keep"` while a turn runs or waits: held in the workflow (so it outlives a
   * worker: the update that brought it is in the history) and sent as the next turn once this one ends,
   * however it ends. The run does not continue as new while a message is held.
   */
  hold(message: ChatMessage): HeldMessage {
    this.#held = message;
    void this.#sendHeld();
    return { id: message.id, text: message.text };
  }

  async #sendHeld(): Promise<void> {
    while (this.#held) {
      await this.waitForEnd();
      // a message that came in the same moment may have started a turn first: then the held one waits for it
      if (this.active) continue;
      const message = this.#held;
      this.#held = undefined;
      void this.receive(message);
    }
  }

  /**
   * A child workflow or an MCP server asks a person something: an event of the machine, which opens the item
   * while the turn runs (the handler waiting on the turn returns with it) and hands back its outcome once its
   * wait ends (a decision, a message that answered it, its deadline, or Stop).
   */
  ask(item: PendingItem, deadlineMs: number, onTimeout: DecisionName, outlived = false): Promise<ItemOutcome> {
    const outcome = new Promise<ItemOutcome>((resolve) => this.#askers.set(item.id, resolve));
    void this.#dispatch({ type: 'asked', item, deadlineMs, onTimeout, ...(outlived ? { outlived } : {}) });
    return outcome;
  }

  /** Opens an item and tells the machine, which then publishes it and starts its deadline. */
  #open(item: PendingItem, deadlineMs: number, onTimeout: DecisionName, own: boolean): TurnEvent {
    const { pending } = this.#p;
    this.#entries.set(item.id, pending.open(item));
    pending.syncWaiting();
    this.#p.details(
      `Waiting for a human: ${orList(item.decisions)} ${item.tool} ${summaryLine(JSON.stringify(item.args))} (${item.kind} ${item.id}) until ${item.expiresAt}.`,
    );
    return { type: 'parked', id: item.id, decisions: item.decisions, onTimeout, deadlineMs, own };
  }

  /**
   * Feeds an event to the machine and runs the commands it answers with, in order. A command that answers
   * with an event is the last of its step: at once (then the next step follows, with no await between), or
   * once its work settles. Anything that throws fails the turn, as the machine's `failed` event says.
   */
  #dispatch(first: TurnEvent | undefined): Promise<void> | undefined {
    let event = first;
    while (event) {
      const { state, commands } = nextStep(this.#state, event, this.#rules);
      if (this.#state.kind === 'idle' && state.kind !== 'idle') this.#turnStartedAt = this.#now();
      const boundary = state.boundary !== this.#state.boundary;
      this.#state = state;
      if (boundary) this.#releaseWaiters();
      if (state.kind === 'idle') {
        this.#onStop = undefined;
        this.#regenerating = false;
      }
      event = undefined;
      for (const command of commands) {
        let answer: TurnEvent | Promise<TurnEvent | undefined> | undefined;
        try {
          answer = this.#run(command);
        } catch (error) {
          answer = this.#failed(error);
        }
        if (answer instanceof Promise)
          return answer.then(
            (next) => this.#dispatch(next),
            (error: unknown) => this.#dispatch(this.#failed(error)),
          );
        if (answer) {
          event = answer;
          break;
        }
      }
    }
    return undefined;
  }

  #releaseWaiters(): void {
    const waiting = this.#atBoundary;
    this.#atBoundary = [];
    for (const resolve of waiting) resolve();
  }

  #failed(error: unknown): TurnEvent {
    return { type: 'failed', reason: String(error), text: this.#p.failureText(error) };
  }

  /** Runs one command; the event it answers with, if it answers. */
  #run(command: TurnCommand): TurnEvent | Promise<TurnEvent | undefined> | undefined {
    const { events, pending } = this.#p;
    switch (command.type) {
      case 'record-messages':
        events.message(...command.messages);
        return undefined;
      case 'record-events':
        events.event(...command.events);
        return undefined;
      case 'details':
        this.#p.details(command.text);
        return undefined;
      case 'idle-details':
        this.idleDetails();
        return undefined;
      case 'new-scope':
        this.#scope = this.#p.newScope ? this.#p.newScope() : plainScope();
        return undefined;
      case 'cancel':
        this.#scope.cancel();
        this.#onStop?.();
        return undefined;
      case 'log-error':
        this.#p.logError(command.message, { reason: command.reason });
        return undefined;
      case 'answer-items': {
        const answered = command.decline ? pending.declineWith(command.message) : pending.answerWith(command.message);
        if (command.decline)
          for (const { item } of answered)
            this.#declined.push({ kind: item.kind, tool: item.tool, callId: item.callId, pendingId: item.id });
        return {
          type: 'items-answered',
          answers: answered.map((entry) => ({ decision: entry.decision!, supersededBy: command.message.id })),
        };
      }
      case 'declined-call':
        this.#declined.push({ kind: 'approval', tool: command.call.name, callId: command.call.id });
        return undefined;
      case 'close-turn-items':
        pending.closeTurnItems(command.withdrawn);
        return undefined;
      case 'call-model':
        return this.#callModel(command);
      case 'apply-answer':
        return { type: 'answer-applied', said: this.#p.agent.onAnswer(command.structured, this.#state.log.at(-1)?.id) };
      case 'flush':
        return events.flush().then(() => ({ type: 'flushed' }));
      case 'flush-if-unsaved':
        // What the failure path or the cleanup left unsaved is written now.
        if (!events.hasUnsaved()) return undefined;
        return events
          .flush()
          .catch((error: unknown) => this.#p.logError('Could not record the end of a turn', { reason: describeError(error) }))
          .then(() => undefined);
      case 'say': {
        const message: ChatMessage = { id: this.#p.newId(), role: 'assistant', text: command.text };
        if (command.record) events.message(message);
        return { type: 'said', message };
      }
      case 'open-item':
        return this.#open(command.item, command.deadlineMs, command.onTimeout, false);
      case 'publish-item':
        // Written while the human thinks: the open item reaches event subscribers without delaying the reply.
        return events.flush().then(() => ({ type: 'item-published', id: command.id }));
      case 'await-stop':
        // a timer that the Stop ends first (a step stopped by its notice waits for it, turn-machine.ts)
        return this.#p.condition(() => this.stopping, command.timeoutMs).then((): TurnEvent => ({ type: 'stop-awaited' }));
      case 'start-deadline':
        // The deadline is a timer that the item's answer ends first: the condition holds both (one timer, as always).
        return this.#scope
          .run(() => this.#p.condition(() => answerTo(this.#state, command.id) !== undefined, command.deadlineMs))
          .then(
            (answered): TurnEvent => ({ type: answered ? 'wait-over' : 'deadline-passed', id: command.id }),
            (): TurnEvent => ({ type: 'wait-cancelled', id: command.id }),
          );
      case 'close-item': {
        const entry = this.#entries.get(command.id);
        this.#entries.delete(command.id);
        if (!entry) return undefined;
        const { outcome } = command;
        if (outcome.withdrawn) {
          pending.close(entry, 'withdrawn', outcome.decision);
          return undefined;
        }
        pending.settle(entry, outcome);
        this.#p.details(`Turn ${this.turns}: ${entry.item.kind} ${entry.item.id} closed with "${outcome.decision.decision}".`);
        return undefined;
      }
      case 'reply-asker': {
        const resolve = this.#askers.get(command.id);
        this.#askers.delete(command.id);
        resolve?.(command.outcome);
        return undefined;
      }
      case 'park-approval': {
        const { call, args, deadlineMs } = command;
        const item: PendingItem = {
          id: this.#p.newId(),
          kind: 'approval',
          tool: call.name,
          callId: call.id,
          args,
          decisions: command.decisions,
          expiresAt: new Date(this.#now() + deadlineMs).toISOString(),
          ...(command.details ? { details: command.details } : {}),
          ...(this.#previews[call.id] ? { preview: this.#previews[call.id] } : {}),
        };
        return this.#open(item, deadlineMs, command.onTimeout, true);
      }
      case 'park-budget': {
        const { over, deadlineMs } = command;
        const item = budgetItem(this.#p.newId(), over, new Date(this.#now() + deadlineMs).toISOString());
        return this.#open(item, deadlineMs, 'reject', true);
      }
      case 'run-tool':
        return this.#scope
          .run(() => this.#p.runTool(command.call, command.args))
          .then(
            (result): TurnEvent => ({ type: 'tool-finished', result }),
            (error: unknown): TurnEvent => ({ type: 'tool-failed', text: this.#p.failureText(error), reason: describeError(error) }),
          );
      case 'run-child': {
        const spec = this.#p.findTool(command.call.name)!;
        return this.#unlessStopped(this.#p.runChild(spec, command.call, command.args)).then(
          ({ result, cards }): TurnEvent => ({ type: 'tool-finished', result, ...(cards ? { cards } : {}) }),
          (error: unknown): TurnEvent => ({ type: 'tool-failed', text: this.#p.failureText(error), reason: describeError(error) }),
        );
      }
    }
  }

  /** One model step; it may run tools that need no person itself and ask the model again (`inline`). */
  #callModel({ summary, extraSteps, budget }: Extract<TurnCommand, { type: 'call-model' }>): Promise<TurnEvent> {
    const stepId = this.#p.newId();
    const unsaved = this.#p.events.drain();
    let work: Promise<ModelStepResult>;
    try {
      const context = this.#p.agent.modelContext();
      work = this.#scope.run(() =>
        this.#p.modelStep(summary, {
          stepId,
          ...(context ? { context } : {}),
          extraSteps,
          ...unsaved,
          ...(budget ? { budget } : {}),
          turnStartedAt: this.#turnStartedAt,
          ...(this.#regenerating ? { regenerate: true } : {}),
        }),
      );
    } catch (error) {
      work = Promise.reject(error);
    }
    return work.then(
      ({ message, before = [], usage, overBudget, interrupted, previews = {} }): TurnEvent | Promise<TurnEvent> => {
        this.#previews = previews;
        return interrupted
          ? { type: 'model-interrupted', unsaved, stopped: interrupted }
          : overBudget
            ? { type: 'over-budget', over: overBudget, before, usage }
            : { type: 'model-answered', reply: message, before, usage };
      },
      (error: unknown): TurnEvent => {
        const stopped = stoppedStepOf(error);
        return {
          type: 'model-failed',
          reason: describeError(error),
          text: this.#p.failureText(error),
          unsaved,
          ...(stopped ? { stopped } : {}),
        };
      },
    );
  }

  /** `work`, unless Stop comes first: then TurnStopped, and the work goes on unawaited (a child workflow). */
  #unlessStopped<T>(work: Promise<T>): Promise<T> {
    if (this.stopping) return Promise.reject(new TurnStopped());
    return Promise.race([work, new Promise<never>((_, reject) => (this.#onStop = () => reject(new TurnStopped())))]).finally(
      () => (this.#onStop = undefined),
    );
  }
}

/** "approve, reject or edit" */
export function orList(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}
