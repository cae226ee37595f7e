// The turn loop: a user message starts a turn, which asks the model, runs or refuses the tools it calls,
// and asks again until the model answers without tools or a limit stops it. A turn runs detached from the
// handler that started it, so it can park on a pending item (the handler returns with the item) and go on
// when a decision arrives (the handler that brought it waits for the next boundary). Everything Temporal
// does for it (activities, child workflows, timers, details) comes in as ports, so the loop is tested
// without a worker; the workflow passes the SDK's own functions, which keeps its commands and their order.
import type { ModelStepResult } from '../activities/runtime-types.ts';
import type { ChildToolOutput } from '../shared/child-tool.ts';
import type {
  ChatMessage,
  ConversationStatus,
  DecisionName,
  JsonObject,
  NewEvent,
  PendingItem,
  SessionSettings,
  ToolCall,
  TurnResult,
  Usage,
} from '../shared/messages.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { boundTurnResult, summaryLine } from '../shared/payload-bounds.ts';
import { type ToolSpec, describeIssues } from '../shared/tool-spec.ts';
import type { AgentState } from './agent-state.ts';
import type { EventLog } from './event-log.ts';
import type { ItemOutcome, PendingItems } from './pending-items.ts';
import type { BudgetAllowance, BudgetExceeded } from '../shared/turn-control.ts';
import { budgetItem, budgetRefusal } from './budget.ts';
import { type TurnScope, TurnStopped, plainScope, stoppedCallResult, stoppedStepOf, withdrawal } from './stop.ts';

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

export interface TurnCounters {
  turns: number;
  usage: Usage;
  /** approved budget items, carried across continue-as-new */
  budgetRaises?: number;
}

export class TurnLoop {
  #turns: number;
  #turnsThisRun = 0;
  readonly usage: Usage;
  #active = false;
  /** bumped whenever a turn ends or parks: what handlers wait for */
  #boundary = 0;
  /** the current turn's messages, returned by the handlers that wait on it */
  #log: ChatMessage[] = [];
  /** a user message that arrived while the turn was parked; it enters the transcript after the tool results */
  #interjection: ChatMessage | undefined;
  /** what Stop cancels in the current turn, and whether Stop was asked for */
  #scope: TurnScope = plainScope();
  #stopping = false;
  #onStop: (() => void) | undefined;
  /** the boundary at which the last stopped turn ended, so its waiters answer `stopped: true` */
  #stoppedAt = -1;
  /** the model's calls in this turn that have no tool message yet, and the one a child workflow runs */
  #unanswered: ToolCall[] = [];
  #childCall: string | undefined;
  /** the MCP call a server is working on now, if any */
  #serverCall: string | undefined;
  /** approved budget items in this conversation, and whether one was approved in this turn */
  #budgetRaises: number;
  #budgetApprovedThisTurn = false;
  readonly #p: TurnLoopPorts;

  constructor(ports: TurnLoopPorts, carried: TurnCounters) {
    this.#p = ports;
    this.#turns = carried.turns;
    this.usage = carried.usage;
    this.#budgetRaises = carried.budgetRaises ?? 0;
  }

  get budgetRaises(): number {
    return this.#budgetRaises;
  }

  get turns(): number {
    return this.#turns;
  }

  get turnsThisRun(): number {
    return this.#turnsThisRun;
  }

  get active(): boolean {
    return this.#active;
  }

  /** where a handler's share of the turn's messages starts */
  get logLength(): number {
    return this.#log.length;
  }

  /** the turn waits for a person: a message may answer, a decision may come */
  get parked(): boolean {
    return this.#active && this.#p.pending.turnWaits();
  }

  status(): ConversationStatus {
    return !this.#active ? 'idle' : this.parked ? 'waiting' : 'running';
  }

  #now(): number {
    return this.#p.now ? this.#p.now() : Date.now();
  }

  idleDetails(): void {
    const waiting = this.#p.pending.items();
    this.#p.details(
      waiting.length
        ? `Idle after ${this.#turns} turn(s); waiting for a decision on ${waiting.map((item) => `${item.kind} ${item.id}`).join(', ')}.`
        : `Idle after ${this.#turns} turn(s): waiting for the next message.`,
    );
  }

  /** The turn's messages from `logStart` on, once the turn ends or parks. */
  waitForBoundary(logStart: number): Promise<TurnResult> {
    const start = this.#boundary;
    // An Update's response over 2 MB would end the workflow: bounded, with ids to read the rest by.
    return this.#p
      .condition(() => this.#boundary > start)
      .then(() =>
        boundTurnResult({
          messages: this.#log.slice(logStart),
          pending: this.#p.pending.items(),
          ...(this.#stoppedAt === this.#boundary ? { stopped: true } : {}),
        }),
      );
  }

  /** whether Stop was asked for in the running turn */
  get stopping(): boolean {
    return this.#active && this.#stopping;
  }

  /**
   * Stop: cancels the running (or parked) turn's model step and tools, withdraws its open items and ends
   * it, keeping what it wrote. False when no turn runs; asking again while it stops changes nothing.
   */
  stop(): boolean {
    if (!this.#active) return false;
    if (this.#stopping) return true;
    this.#stopping = true;
    this.#p.details(`Turn ${this.#turns}: stopping (Stop was pressed).`);
    this.#scope.cancel();
    this.#onStop?.();
    return true;
  }

  /** Resolves once the current turn has ended (at once when none runs). */
  async waitForEnd(): Promise<void> {
    if (this.#active) await this.#p.condition(() => !this.#active);
  }

  /** `work`, unless Stop comes first: then TurnStopped, and the work goes on unawaited (a child workflow). */
  #unlessStopped<T>(work: Promise<T>): Promise<T> {
    if (this.#stopping) return Promise.reject(new TurnStopped());
    return Promise.race([work, new Promise<never>((_, reject) => (this.#onStop = () => reject(new TurnStopped())))]).finally(
      () => (this.#onStop = undefined),
    );
  }

  /**
   * A user message: starts a turn, or, while the turn is parked, answers each of its open items the way
   * its kind says (a refusal, a choice). Resolves at the next boundary with what the turn did.
   */
  receive(message: ChatMessage): Promise<TurnResult> {
    if (this.#active) {
      const logStart = this.#log.length;
      this.#p.pending.answerWith(message);
      this.#interjection = message;
      this.#log.push(message);
      return this.waitForBoundary(logStart);
    }
    this.#active = true;
    this.#stopping = false;
    this.#scope = this.#p.newScope ? this.#p.newScope() : plainScope();
    this.#unanswered = [];
    this.#childCall = undefined;
    this.#serverCall = undefined;
    this.#budgetApprovedThisTurn = false;
    this.#log = [message];
    const result = this.waitForBoundary(0);
    void this.#runTurn(message);
    return result;
  }

  /**
   * Opens a turn-scoped item and waits for a decision, a message that answers it, or the deadline. The turn
   * parks meanwhile: the handler that waits on the turn returns with the item.
   */
  async park(item: PendingItem, deadlineMs: number, onTimeout: DecisionName): Promise<ItemOutcome> {
    const { pending, events } = this.#p;
    // A child that asks once the turn has ended or is stopping gets a refusal at once, no item opened.
    if (!this.#active || this.#stopping) return { decision: withdrawal(item, onTimeout), timedOut: false, withdrawn: true };
    const entry = pending.open(item);
    pending.syncWaiting();
    this.#p.details(
      `Waiting for a human: ${orList(item.decisions)} ${item.tool} ${summaryLine(JSON.stringify(item.args))} (${item.kind} ${item.id}) until ${item.expiresAt}.`,
    );
    this.#boundary += 1;
    // Written while the human thinks: the open item reaches event subscribers without delaying the reply.
    await events.flush();
    const waited = await this.#scope
      .run(() => this.#p.condition(() => entry.decision !== undefined, deadlineMs))
      .then(
        (decided) => ({ decided }),
        (error: unknown) => {
          if (!this.#stopping) throw error;
          return undefined;
        },
      );
    if (!waited) {
      // Stop withdrew the item: closed as withdrawn, its owner told of a refusal.
      const decision = withdrawal(item, onTimeout);
      pending.close(entry, 'withdrawn', decision);
      return { decision, timedOut: false, withdrawn: true };
    }
    const outcome = pending.settle(entry, waited.decided, onTimeout);
    this.#p.details(`Turn ${this.#turns}: ${item.kind} ${item.id} closed with "${outcome.decision.decision}".`);
    return outcome;
  }

  async #runTurn(userMessage: ChatMessage): Promise<void> {
    const { settings, events, pending } = this.#p;
    this.#turns += 1;
    this.#turnsThisRun += 1;
    events.message(userMessage);
    let invalidCalls = 0;
    try {
      for (let step = 1; ;) {
        if (step > settings.maxSteps) {
          await this.#finish(
            `I stopped after ${settings.maxSteps} steps without reaching an answer. Please rephrase or narrow the request.`,
          );
          return;
        }
        this.#p.details(`Turn ${this.#turns}, step ${step}: waiting for the model.`);
        const called = await this.#callModel(step);
        if (!called) return;
        // the reply's calls need answers in the transcript however the turn goes on (a Stop may have come)
        this.#unanswered = 'reply' in called ? [...(called.reply.toolCalls ?? [])] : [];
        if (this.#stopping) throw new TurnStopped();
        if ('budget' in called) {
          step += called.modelCalls;
          if (!(await this.#askBudget(called.budget))) return;
          continue;
        }
        const { reply, modelCalls } = called;
        step += modelCalls;
        if (this.#p.agent.kernel && reply.structured !== undefined) {
          const said = this.#p.agent.onAnswer(reply.structured);
          this.#log.push(...said);
          await events.flush();
        }
        const calls = reply.toolCalls ?? [];
        if (!calls.length) return;
        for (const call of calls) {
          const valid = await this.#handleCall(call);
          if (!valid) invalidCalls += 1;
          if (this.#stopping) throw new TurnStopped();
        }
        if (this.#interjection) {
          events.message(this.#interjection);
          this.#interjection = undefined;
        }
        if (invalidCalls > settings.maxToolErrors) {
          await this.#finish(`I stopped: the model made ${invalidCalls} invalid tool calls in this turn. Please rephrase the request.`);
          return;
        }
      }
    } catch (error) {
      if (this.#stopping) {
        this.#stopped();
      } else {
        // Only bookkeeping that failed all its retries (or a kernel bug) gets here; the conversation stays usable.
        this.#p.logError('Turn failed', { reason: String(error) });
        this.#log.push({
          id: this.#p.newId(),
          role: 'assistant',
          text: `The turn failed (${this.#p.failureText(error)}). Please try again.`,
        });
      }
    } finally {
      // Turn-scoped items belong to their turn: one that failed while parked must not leave them open.
      pending.closeTurnItems();
      const stopped = this.#stopping;
      // A message sent while the stopped turn was parked is kept in the transcript.
      if (stopped && this.#interjection) events.message(this.#interjection);
      this.#interjection = undefined;
      this.#active = false;
      this.#stopping = false;
      this.#onStop = undefined;
      this.idleDetails();
      this.#boundary += 1;
      if (stopped) this.#stoppedAt = this.#boundary;
      // What the failure path or the cleanup left unsaved (the finally's events) is written now.
      if (events.hasUnsaved()) {
        await events.flush().catch((error: unknown) => this.#p.logError('Could not record the end of a turn', { reason: String(error) }));
      }
    }
  }

  /** Ends a stopped turn's books: every call it left unanswered gets a tool message, and the stop an event. */
  #stopped(): void {
    for (const call of this.#unanswered)
      this.#addToolMessage(call, call.args, stoppedCallResult(call.id === this.#childCall, call.id === this.#serverCall));
    this.#unanswered = [];
    const cut = this.#log.findLast((message) => message.role === 'assistant' && message.stopped);
    this.#p.events.event({
      key: `turn-stopped:${this.#log[0]!.id}`,
      type: 'turn.stopped',
      data: { turn: this.#turns, ...(cut ? { messageId: cut.id } : {}) },
    });
  }

  /** One model step; it may run tools that need no person itself and ask the model again (`inline`). */
  async #callModel(
    step: number,
  ): Promise<{ reply: ChatMessage; modelCalls: number } | { budget: BudgetExceeded; modelCalls: number } | undefined> {
    const { settings } = this.#p;
    const stepId = this.#p.newId();
    const extraSteps = settings.inlineTools === false ? 0 : settings.maxSteps - step;
    const unsaved = this.#p.events.drain();
    try {
      const context = this.#p.agent.modelContext();
      const budget = this.#budgetAllowance();
      const {
        message,
        before = [],
        usage: used,
        overBudget,
      } = await this.#scope.run(() =>
        this.#p.modelStep(
          `model: turn ${this.#turns}, step ${step}${extraSteps ? ' (runs tools that need no person, then asks again)' : ''}`,
          { stepId, ...(context ? { context } : {}), extraSteps, ...unsaved, ...(budget ? { budget } : {}) },
        ),
      );
      if (overBudget) {
        // The step did not ask the model (again): what it did before that stays, and the turn asks a person.
        const modelCalls = before.filter((message) => message.role === 'assistant').length;
        this.usage.inputTokens += used.inputTokens;
        this.usage.outputTokens += used.outputTokens;
        this.usage.totalTokens += used.totalTokens;
        this.usage.calls += modelCalls;
        this.#log.push(...before);
        return { budget: overBudget, modelCalls };
      }
      const modelCalls = 1 + before.filter((message) => message.role === 'assistant').length;
      this.usage.inputTokens += used.inputTokens;
      this.usage.outputTokens += used.outputTokens;
      this.usage.totalTokens += used.totalTokens;
      this.usage.calls += modelCalls;
      this.#log.push(...before, message);
      return { reply: message, modelCalls };
    } catch (error) {
      if (this.#stopping) {
        // The step may have been cancelled before it wrote what it was handed: written again, keyed, so once.
        this.#p.events.message(...unsaved.messages);
        this.#p.events.event(...unsaved.events);
        const stopped = stoppedStepOf(error);
        if (stopped) this.#log.push(...stopped.before, ...(stopped.partial ? [stopped.partial] : []));
        throw new TurnStopped();
      }
      this.#p.logError('Model step failed', { reason: String(error) });
      await this.#finish(`The model could not answer (${this.#p.failureText(error)}). Nothing else was done; please try again.`);
      return undefined;
    }
  }

  /** What the model step is told of budget approvals; undefined when there were none (the usual input). */
  #budgetAllowance(): BudgetAllowance | undefined {
    if (!this.#budgetRaises && !this.#budgetApprovedThisTurn) return undefined;
    return { raises: this.#budgetRaises, ...(this.#budgetApprovedThisTurn ? { approvedThisTurn: true } : {}) };
  }

  /**
   * Over a budget: the turn parks on a `budget` item. Approve raises the conversation's budget by one
   * budget's worth and lets this turn go on (true); reject, a message or the deadline end it with a message.
   */
  async #askBudget(over: BudgetExceeded): Promise<boolean> {
    const deadlineMs = this.#p.settings.approvalTimeoutMs;
    const item = budgetItem(this.#p.newId(), over, new Date(this.#now() + deadlineMs).toISOString());
    const { decision, timedOut, withdrawn } = await this.park(item, deadlineMs, 'reject');
    if (withdrawn) throw new TurnStopped();
    // A message that refused the item is part of the transcript, before the turn's last word.
    if (this.#interjection) {
      this.#p.events.message(this.#interjection);
      this.#interjection = undefined;
    }
    if (decision.decision === 'approve') {
      this.#budgetRaises += 1;
      this.#budgetApprovedThisTurn = true;
      return true;
    }
    await this.#finish(budgetRefusal(over, timedOut, decision.reason));
    return false;
  }

  /** Ends the turn with a message of the runtime's own (limits, failures), persisted with what is unsaved. */
  async #finish(text: string): Promise<void> {
    const message: ChatMessage = { id: this.#p.newId(), role: 'assistant', text };
    this.#log.push(message);
    this.#p.events.message(message);
    await this.#p.events.flush();
  }

  /** Runs or refuses one call; false when the model's call itself was invalid. */
  async #handleCall(call: ToolCall): Promise<boolean> {
    const spec = this.#p.findTool(call.name);
    if (!spec) {
      const names = this.#p.tools.map((tool) => tool.name).join(', ') || 'none';
      this.#addToolMessage(call, call.args, { error: `Unknown tool "${call.name}". Available tools: ${names}.` });
      return false;
    }
    const parsed = spec.args.safeParse(call.args);
    if (!parsed.success) {
      this.#addToolMessage(call, call.args, { error: `Invalid arguments for ${call.name}: ${describeIssues(parsed.error)}` });
      return false;
    }
    let args = parsed.data as JsonObject;
    if (spec.policy.approval) {
      const deadlineMs = spec.policy.deadlineMs ?? this.#p.settings.approvalTimeoutMs;
      const item: PendingItem = {
        id: this.#p.newId(),
        kind: 'approval',
        tool: call.name,
        callId: call.id,
        args,
        decisions: spec.policy.decisions,
        expiresAt: new Date(this.#now() + deadlineMs).toISOString(),
        ...(spec.details ? { details: spec.details } : {}),
      };
      const { decision, supersededBy, withdrawn } = await this.park(item, deadlineMs, spec.policy.onTimeout);
      if (withdrawn) throw new TurnStopped();
      if (decision.decision === 'reject' || decision.decision === 'no') {
        const why = decision.reason?.trim() || 'no reason given';
        this.#addToolMessage(call, args, {
          status: 'rejected',
          error: supersededBy
            ? `Not run: the user answered with a message instead of approving: "${why}"`
            : `The user rejected this call: ${why}`,
        });
        return true;
      }
      if (decision.decision === 'edit' && decision.args) args = spec.args.parse(decision.args) as JsonObject;
    }
    if (spec.runner?.kind === 'child') {
      // Stop does not cancel a child workflow (a save pipeline is not torn apart mid-step): the turn stops waiting.
      this.#childCall = call.id;
      const { result, cards } = await this.#unlessStopped(this.#p.runChild(spec, call, args));
      this.#childCall = undefined;
      this.#addToolMessage(call, args, result, cards);
      return true;
    }
    // an MCP server works on the call outside this workflow: a Stop meanwhile may not have prevented it
    if ('mcp' in spec) this.#serverCall = call.id;
    const result = await this.#scope
      .run(() => this.#p.runTool(call, args))
      .catch((error: unknown) => {
        if (this.#stopping) throw new TurnStopped();
        return { error: `The tool failed (${this.#p.failureText(error)}).` };
      });
    this.#serverCall = undefined;
    this.#answered(call);
    this.#log.push(toolMessage(call, args, result));
    return true;
  }

  #answered(call: ToolCall): void {
    this.#unanswered = this.#unanswered.filter((open) => open.id !== call.id);
  }

  #addToolMessage(call: ToolCall, args: JsonObject, result: unknown, cards?: JsonObject[]): void {
    this.#answered(call);
    const message = toolMessage(call, args, result, cards);
    this.#log.push(message);
    this.#p.events.message(message);
  }
}

/** "approve, reject or edit" */
export function orList(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}
