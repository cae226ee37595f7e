// The turn as a state machine: what a turn is doing (its phase and its books), what can happen to it (events),
// and what the workflow must do next (commands). `nextStep` is a pure function of the three, so every
// transition, the odd ones included (Stop while a person decides, a decision after Stop, a tool that fails),
// is tested without a worker; TurnLoop (turn-loop.ts) runs the commands through Temporal and feeds back what
// came of them. The commands are the ones the turn always issued, in the same order, so recorded histories
// replay: anything that needs a fresh id or the clock (a message of the runtime's own, an item's deadline)
// is made by the driver when it runs the command, in the order the turn always made them.
//
// Stop is not a phase: it can come in any phase, and what is in flight still reports (cancelled, or done
// just before); the turn's `stopping` flag says that its report ends the turn as stopped.
//
// Waiting for a person is a state of the machine too: each item (the turn's approval or budget item, a child's
// or an MCP server's question, which comes in as `asked`) is in its books from the moment it opens (`parked`)
// until its wait ends, with the answer once a decision or a message gave one (`decided`, `items-answered`). The
// deadline is a timer command (`start-deadline`); the wait ends as an event (`wait-over`, `deadline-passed`, or
// `wait-cancelled` by Stop or a branch move), whose outcome the machine turns into the item's closing and the
// turn's next step (or the asker's answer). The conversation's status (statusOf) is a function of the state alone.
import { type BudgetAllowance, type BudgetExceeded, STEP_STOPPED, type StoppedStep } from '../shared/turn-control.ts';
import type {
  ChatMessage,
  ConversationStatus,
  DecisionInput,
  DecisionName,
  JsonObject,
  NewEvent,
  PendingItem,
  ToolCall,
  Usage,
} from '../shared/messages.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { addUsage } from '../shared/usage-sum.ts';
import { type ToolSpec, describeIssues, needsApproval } from '../shared/tool-spec.ts';
import type { ItemOutcome } from './pending-items.ts';
import { budgetRefusal } from './budget.ts';
import { type TurnEnd, stoppedCallResult, withdrawal } from './stop.ts';

/** What the machine is told once, at start: the limits and the tools the model may call. */
export interface TurnRules {
  maxSteps: number;
  maxToolErrors: number;
  /** false: each tool is a step of the workflow's own, never run inside the model step */
  inlineTools?: boolean;
  approvalTimeoutMs: number;
  /** whether the agent has a kernel that turns a structured answer into effects */
  stateful: boolean;
  /** a tool by name (the agent's and its MCP servers'), and the names an unknown call is told of */
  findTool(name: string): ToolSpec | undefined;
  toolNames: readonly string[];
}

/** What the conversation counts across turns (and hands on across continue-as-new). */
export interface TurnCounters {
  turns: number;
  turnsThisRun: number;
  usage: Usage;
  /** approved budget items in this conversation */
  budgetRaises: number;
}

/** The running turn's books, whatever its phase. */
export interface TurnBooks {
  /** the number of the next model call */
  step: number;
  invalidCalls: number;
  /** a budget item was approved in this turn (the model step is told so) */
  budgetApproved: boolean;
  /** the model's calls that have no tool message yet: each gets one however the turn ends */
  unanswered: readonly ToolCall[];
  /** a user message that came while the turn was parked: it enters the transcript after the tool results */
  interjection?: ChatMessage;
  /**
   * a message sent with `pending: "decline"`: it declined the items open when it came, and declines the
   * reply's calls that would ask a person next, so that one message refuses them all (not the first only)
   */
  declining?: ChatMessage;
  /** Stop was asked for, or the conversation moved to another branch: what ends the turn, and says so */
  stopping: false | TurnEnd;
}

/**
 * An item a person is asked (the turn's approval or budget item, a child's or an MCP server's question), from
 * the moment it opens until its wait ends, with what answered it once something did.
 */
export interface Asked {
  id: string;
  /** the turn that asked it (counters.turns): only the running turn's unanswered items make it wait */
  turn: number;
  /** the turn's own item (approval, budget): its outcome moves the turn; anyone else's is handed back to its asker */
  own: boolean;
  decisions: readonly DecisionName[];
  onTimeout: DecisionName;
  deadlineMs: number;
  /** a decision, or what a message answered instead (supersededBy: the message) */
  answer?: { decision: DecisionInput; supersededBy?: string };
}

/** What a step stopped by a Stop's notice was handed (written again, keyed) and what it wrote before it let go. */
interface Interrupted {
  unsaved: { messages: ChatMessage[]; events: NewEvent[] };
  stopped: StoppedStep;
}

/** How long a turn whose step a Stop's notice stopped waits for the Stop itself (the API sends it right after). */
export const STOP_ARRIVAL_MS = 10_000;

/** Where the turn is in the reply's tool calls: the calls, and the index of the one at hand. */
interface Calls {
  calls: readonly ToolCall[];
  next: number;
}

/** Always there: what handlers wait for (bumped when a turn ends or parks) and the counters. */
interface Session {
  counters: TurnCounters;
  /** bumped whenever a turn ends or parks: what the handlers waiting on a turn wait for */
  boundary: number;
  /** the boundary at which the last stopped turn ended, so its waiters answer `stopped: true` */
  stoppedAt: number;
  /** the running (or last) turn's messages, from the user's on: what the handlers waiting on it answer with */
  log: readonly ChatMessage[];
  /** the items waiting for a person, until each one's wait ends (a child's may end after its turn did) */
  asked: readonly Asked[];
  /** what ended the last turn ended early: the words an item withdrawn after it closes with */
  ended?: TurnEnd;
}

type InTurn = Session & { turn: TurnBooks };

export type TurnState =
  | (Session & { kind: 'idle' })
  /** a model step runs */
  | (InTurn & { kind: 'calling-model'; interrupted?: Interrupted })
  /** a stateful agent's kernel applied the structured answer; what it said is being written */
  | (InTurn & Calls & { kind: 'answering' })
  /** a call needs a person's approval: the turn is parked on its item */
  | (InTurn & Calls & { kind: 'awaiting-approval'; args: JsonObject })
  /** a call runs: as a local activity, on an MCP server (which may ask the user a question), or as a child workflow */
  | (InTurn & Calls & { kind: 'running-tool'; args: JsonObject; runner: CallRunner })
  /** a budget is spent: the turn is parked on a budget item */
  | (InTurn & { kind: 'budget-paused'; over: BudgetExceeded })
  /** the turn ends with a message of the runtime's own (a limit, a failure), being written */
  | (InTurn & { kind: 'finishing' })
  /** the turn failed (bookkeeping that failed all its retries): it ends with a message saying so */
  | (InTurn & { kind: 'failing' });

export type TurnPhase = TurnState['kind'];
export type CallRunner = 'activity' | 'mcp' | 'child';

export type TurnEvent =
  /** a user message: starts a turn, or answers the parked one's items (declines them all with `decline`) */
  | {
      type: 'message';
      message: ChatMessage;
      decline?: boolean;
      /** a regenerate: the message is stored already, the turn runs again from it */ stored?: boolean;
    }
  | { type: 'model-answered'; reply: ChatMessage; before: ChatMessage[]; usage: Omit<Usage, 'calls'> }
  /** the step found a budget spent before its (next) model call, which it did not make */
  | { type: 'over-budget'; over: BudgetExceeded; before: ChatMessage[]; usage: Omit<Usage, 'calls'> }
  /**
   * the step failed or was cancelled; `unsaved` is what it was handed (written again if Stop cancelled it
   * before it wrote it), `stopped` what it wrote before it let go
   */
  | {
      type: 'model-failed';
      reason: string;
      text: string;
      unsaved: { messages: ChatMessage[]; events: NewEvent[] };
      stopped?: StoppedStep;
    }
  /**
   * a Stop's notice stopped the step before the Stop itself reached the workflow: what the step was handed and
   * what it wrote, until the Stop comes (or its wait runs out, and the turn stops itself: the user asked)
   */
  | ({ type: 'model-interrupted' } & Interrupted)
  /** the wait for the Stop whose notice stopped the step ended (it came, or it did not in time) */
  | { type: 'stop-awaited' }
  /** the kernel applied a structured answer and said this */
  | { type: 'answer-applied'; said: ChatMessage[] }
  /** what was unsaved is written */
  | { type: 'flushed' }
  /** the runtime's own message (made by the driver, with a fresh id) */
  | { type: 'said'; message: ChatMessage }
  /**
   * the turn's approval (budget) item closed: decided, answered by a message, expired, or withdrawn by Stop. The
   * machine feeds it to itself when the item's wait ends (tests may feed it directly)
   */
  | { type: 'approval-decided'; outcome: ItemOutcome }
  | { type: 'budget-decided'; outcome: ItemOutcome }
  | { type: 'tool-finished'; result: unknown; cards?: JsonObject[] }
  /** the tool's activity failed all its attempts, or was cancelled by Stop */
  /** `text` may be shown to the user; `reason` is what the log may say (describeError) */
  | { type: 'tool-failed'; text: string; reason: string }
  /**
   * a child workflow or an MCP server asks a person something while the turn runs its call; `outlived`: the child
   * runs for a turn that has ended (stopped, or left on another branch), so it asks no one
   */
  | { type: 'asked'; item: PendingItem; deadlineMs: number; onTimeout: DecisionName; outlived?: boolean }
  /** an item opened (the turn's own, or one asked of it): its waiters answer, its wait begins */
  | { type: 'parked'; id: string; decisions: readonly DecisionName[]; onTimeout: DecisionName; deadlineMs: number; own: boolean }
  /** the open item is written (its subscribers see it while the person thinks) */
  | { type: 'item-published'; id: string }
  /** a person decided an item (the decide update, the decision signal, a question whose MCP call gave up) */
  | { type: 'decided'; decision: DecisionInput }
  /** a message answered (or declined) open items, instead of a decision */
  | { type: 'items-answered'; answers: readonly { decision: DecisionInput; supersededBy: string }[] }
  /** the wait on an item ended: an answer came, its deadline passed (its timer fired), or Stop cancelled it */
  | { type: 'wait-over'; id: string }
  | { type: 'deadline-passed'; id: string }
  | { type: 'wait-cancelled'; id: string }
  | { type: 'stop' }
  /** an edit, a regenerate or a version switch leaves the (parked) turn behind on its branch: it ends, in those words */
  | { type: 'branch-left' }
  /** something the turn relies on failed (bookkeeping past its retries, a kernel bug) */
  | { type: 'failed'; reason: string; text: string };

export type TurnCommand =
  /** write these with the next batch (events.message) */
  | { type: 'record-messages'; messages: ChatMessage[] }
  | { type: 'record-events'; events: NewEvent[] }
  | { type: 'details'; text: string }
  /** the Web UI's details while idle (it names what waits for a decision) */
  | { type: 'idle-details' }
  | { type: 'new-scope' }
  /** Stop: cancel the turn's scope, and stop waiting for a child workflow */
  | { type: 'cancel' }
  | { type: 'log-error'; message: string; reason: string }
  /** a message answers the turn's open items the way their kinds say (pending.answerWith) → items-answered */
  | { type: 'answer-items'; message: ChatMessage; decline?: boolean }
  /** a call of the reply that the declining message refused before it asked anyone */
  | { type: 'declined-call'; call: ToolCall }
  /** the turn's items close with it: withdrawn, in its words, when Stop or a branch move ended it */
  | { type: 'close-turn-items'; withdrawn?: TurnEnd }
  /** a timer that the Stop a step's interruption announced ends first → stop-awaited */
  | { type: 'await-stop'; timeoutMs: number }
  /** → model-answered | over-budget | model-interrupted | model-failed */
  | { type: 'call-model'; step: number; summary: string; extraSteps: number; budget?: BudgetAllowance }
  /** → answer-applied */
  | { type: 'apply-answer'; structured: unknown }
  /** → flushed */
  | { type: 'flush' }
  /** write what is unsaved, if anything, logging a failure (the turn has ended: nobody else would hear of it) */
  | { type: 'flush-if-unsaved' }
  /** a message of the runtime's own, written with the next batch when `record` → said */
  | { type: 'say'; text: string; record: boolean }
  /** opens the turn's approval item (the driver makes its id and deadline) → parked */
  | {
      type: 'park-approval';
      call: ToolCall;
      args: JsonObject;
      deadlineMs: number;
      decisions: DecisionName[];
      onTimeout: DecisionName;
      details?: JsonObject;
    }
  /** opens the turn's budget item → parked */
  | { type: 'park-budget'; over: BudgetExceeded; deadlineMs: number }
  /** opens an item asked of the turn → parked */
  | { type: 'open-item'; item: PendingItem; deadlineMs: number; onTimeout: DecisionName }
  /** writes the open item → item-published */
  | { type: 'publish-item'; id: string }
  /** the item's deadline: a timer that an answer (or Stop) ends first → wait-over | deadline-passed | wait-cancelled */
  | { type: 'start-deadline'; id: string; deadlineMs: number }
  /** closes the item as its outcome says (decided, superseded, expired, withdrawn) */
  | { type: 'close-item'; id: string; outcome: ItemOutcome }
  /** hands the outcome back to whoever asked (a child workflow, an MCP call) */
  | { type: 'reply-asker'; id: string; outcome: ItemOutcome }
  /** → tool-finished | tool-failed */
  | { type: 'run-tool'; call: ToolCall; args: JsonObject }
  /** → tool-finished | tool-failed */
  | { type: 'run-child'; call: ToolCall; args: JsonObject };

export interface Step {
  state: TurnState;
  commands: TurnCommand[];
}

/** A conversation with no turn running, from what the previous run counted. */
export function idleState(counters: Omit<TurnCounters, 'turnsThisRun'>): TurnState {
  return { kind: 'idle', counters: { ...counters, turnsThisRun: 0 }, boundary: 0, stoppedAt: -1, log: [], asked: [] };
}

/** The commands that answer with an event; each is the last of its step. */
export const AWAITED: ReadonlySet<TurnCommand['type']> = new Set([
  'answer-items',
  'call-model',
  'apply-answer',
  'flush',
  'say',
  'park-approval',
  'park-budget',
  'open-item',
  'publish-item',
  'start-deadline',
  'await-stop',
  'run-tool',
  'run-child',
]);

const stay = (state: TurnState): Step => ({ state, commands: [] });

/**
 * The conversation's status, from the machine alone: idle with no turn, waiting while the turn has asked a
 * person something nobody has answered yet, else running.
 */
export function statusOf(state: TurnState): ConversationStatus {
  if (state.kind === 'idle') return 'idle';
  const { turns } = state.counters;
  return state.asked.some((asked) => asked.turn === turns && !asked.answer) ? 'waiting' : 'running';
}

/** The answer to an item still waited on, once one came (undefined: none yet, or no such wait). */
export function answerTo(state: TurnState, id: string): Asked['answer'] {
  return state.asked.find((asked) => asked.id === id)?.answer;
}

/** The asked items with `id` answered (a second answer to one already answered changes nothing). */
const answering = (asked: readonly Asked[], id: string, answer: NonNullable<Asked['answer']>): readonly Asked[] =>
  asked.map((entry) => (entry.id === id && !entry.answer ? { ...entry, answer } : entry));

/** What the turn does next, given what happened. */
export function nextStep(state: TurnState, event: TurnEvent, rules: TurnRules): Step {
  switch (event.type) {
    case 'asked':
      return asked(state, event);
    case 'parked': {
      const { type: _, ...entry } = event;
      return {
        state: { ...state, asked: [...state.asked, { ...entry, turn: state.counters.turns }], boundary: state.boundary + 1 },
        commands: [{ type: 'publish-item', id: event.id }],
      };
    }
    case 'item-published': {
      const entry = state.asked.find((asked) => asked.id === event.id);
      return entry ? { state, commands: [{ type: 'start-deadline', id: entry.id, deadlineMs: entry.deadlineMs }] } : stay(state);
    }
    case 'decided':
      return stay({ ...state, asked: answering(state.asked, event.decision.pendingId, { decision: event.decision }) });
    case 'items-answered': {
      let { asked } = state;
      for (const answer of event.answers) asked = answering(asked, answer.decision.pendingId, answer);
      return stay({ ...state, asked });
    }
    case 'wait-over':
    case 'deadline-passed':
    case 'wait-cancelled':
      return waitEnded(state, event, rules);
  }
  if (state.kind === 'idle') return event.type === 'message' ? startTurn(state, event.message, rules, event.stored === true) : stay(state);
  switch (event.type) {
    case 'message':
      return {
        state: {
          ...withLog(state, event.message),
          turn: { ...state.turn, interjection: event.message, ...(event.decline ? { declining: event.message } : {}) },
        },
        commands: [{ type: 'answer-items', message: event.message, ...(event.decline ? { decline: true } : {}) }],
      };
    case 'stop':
    case 'branch-left': {
      if (state.turn.stopping) return stay(state);
      const end: TurnEnd = event.type === 'stop' ? 'stop' : 'branch';
      const why = end === 'stop' ? 'Stop was pressed' : 'the conversation moved to another branch';
      return {
        state: { ...state, ended: end, turn: { ...state.turn, stopping: end } },
        commands: [{ type: 'details', text: `Turn ${state.counters.turns}: stopping (${why}).` }, { type: 'cancel' }],
      };
    }
    case 'failed':
      if (state.turn.stopping) return stopped(state);
      return {
        state: { ...state, kind: 'failing' },
        commands: [
          { type: 'log-error', message: 'Turn failed', reason: event.reason },
          { type: 'say', text: `The turn failed (${event.text}). Please try again.`, record: false },
        ],
      };
  }
  switch (state.kind) {
    case 'calling-model':
      return afterModel(state, event, rules);
    case 'answering':
      if (event.type === 'answer-applied') return { state: withLog(state, ...event.said), commands: [{ type: 'flush' }] };
      if (event.type === 'flushed') return state.calls.length ? nextCall(state, rules) : endTurn(state, state.turn.stopping !== false);
      return stay(state);
    case 'awaiting-approval':
      return event.type === 'approval-decided' ? afterApproval(state, event.outcome, rules) : stay(state);
    case 'running-tool':
      return event.type === 'tool-finished' || event.type === 'tool-failed' ? afterTool(state, event, rules) : stay(state);
    case 'budget-paused':
      return event.type === 'budget-decided' ? afterBudget(state, event.outcome, rules) : stay(state);
    case 'finishing':
      if (event.type === 'said') return { state: withLog(state, event.message), commands: [{ type: 'flush' }] };
      return event.type === 'flushed' ? endTurn(state, state.turn.stopping !== false) : stay(state);
    case 'failing':
      return event.type === 'said' ? endTurn(withLog(state, event.message), false) : stay(state);
  }
}

function startTurn(state: Extract<TurnState, { kind: 'idle' }>, message: ChatMessage, rules: TurnRules, stored: boolean): Step {
  const { counters } = state;
  const next: TurnState = {
    kind: 'calling-model',
    counters: { ...counters, turns: counters.turns + 1, turnsThisRun: counters.turnsThisRun + 1 },
    boundary: state.boundary,
    stoppedAt: state.stoppedAt,
    log: stored ? [] : [message],
    asked: state.asked,
    ...(state.ended ? { ended: state.ended } : {}),
    turn: { step: 1, invalidCalls: 0, budgetApproved: false, unanswered: [], stopping: false },
  };
  const step = callModel(next, rules);
  const record: TurnCommand[] = stored ? [] : [{ type: 'record-messages', messages: [message] }];
  return { state: step.state, commands: [{ type: 'new-scope' }, ...record, ...step.commands] };
}

type Active = Exclude<TurnState, { kind: 'idle' }>;

const withLog = <S extends Active>(state: S, ...messages: ChatMessage[]): S => ({ ...state, log: [...state.log, ...messages] });

const withTurn = <S extends Active>(state: S, turn: Partial<TurnBooks>): S => ({ ...state, turn: { ...state.turn, ...turn } });

/** Asks the model (again), unless the turn has used its steps. */
function callModel(state: Active, rules: TurnRules): Step {
  const { step } = state.turn;
  if (step > rules.maxSteps)
    return finish(state, `I stopped after ${rules.maxSteps} steps without reaching an answer. Please rephrase or narrow the request.`);
  const extraSteps = rules.inlineTools === false ? 0 : rules.maxSteps - step;
  const budget = allowance(state.counters.budgetRaises, state.turn.budgetApproved);
  const turns = state.counters.turns;
  return {
    state: { ...state, kind: 'calling-model' } as TurnState,
    commands: [
      { type: 'details', text: `Turn ${turns}, step ${step}: waiting for the model.` },
      {
        type: 'call-model',
        step,
        summary: `model: turn ${turns}, step ${step}${extraSteps ? ' (runs tools that need no person, then asks again)' : ''}`,
        extraSteps,
        ...(budget ? { budget } : {}),
      },
    ],
  };
}

/** What the model step is told of budget approvals; undefined when there were none (the usual input). */
export function allowance(raises: number, approvedThisTurn: boolean): BudgetAllowance | undefined {
  if (!raises && !approvedThisTurn) return undefined;
  return { raises, ...(approvedThisTurn ? { approvedThisTurn: true } : {}) };
}

function counted(counters: TurnCounters, used: Omit<Usage, 'calls'>, calls: number): TurnCounters {
  const { usage } = counters;
  return {
    ...counters,
    usage: { ...addUsage(usage, used), calls: usage.calls + calls },
  };
}

const assistants = (messages: readonly ChatMessage[]) => messages.filter((message) => message.role === 'assistant').length;

function afterModel(state: Extract<TurnState, { kind: 'calling-model' }>, event: TurnEvent, rules: TurnRules): Step {
  switch (event.type) {
    case 'model-interrupted': {
      const { unsaved, stopped: wrote } = event;
      // the Stop is on its way: the turn waits for it, so that it answers the Stop as the turn it stopped
      if (!state.turn.stopping)
        return {
          state: { ...state, interrupted: { unsaved, stopped: wrote } },
          commands: [{ type: 'await-stop', timeoutMs: STOP_ARRIVAL_MS }],
        };
      return afterModel(state, { type: 'model-failed', reason: STEP_STOPPED, text: 'Stopped.', unsaved, stopped: wrote }, rules);
    }
    case 'stop-awaited': {
      const { interrupted } = state;
      if (!interrupted) return stay(state);
      const { interrupted: _, ...waited } = state;
      const failed: TurnEvent = { type: 'model-failed', reason: STEP_STOPPED, text: 'Stopped.', ...interrupted };
      if (waited.turn.stopping) return afterModel(waited, failed, rules);
      // it never came: the turn stops itself, as the user asked all the same
      const stop = nextStep(waited, { type: 'stop' }, rules);
      const next = nextStep(stop.state, failed, rules);
      return { state: next.state, commands: [...stop.commands, ...next.commands] };
    }
    case 'model-failed': {
      if (state.turn.stopping) {
        // The step may have been cancelled before it wrote what it was handed: written again, keyed, so once.
        const { stopped: wrote } = event;
        const kept = wrote ? [...wrote.before, ...(wrote.partial ? [wrote.partial] : [])] : [];
        const next = stopped(withLog(state, ...kept));
        return {
          state: next.state,
          commands: [
            { type: 'record-messages', messages: event.unsaved.messages },
            { type: 'record-events', events: event.unsaved.events },
            ...next.commands,
          ],
        };
      }
      const next = finish(state, `The model could not answer (${event.text}). Nothing else was done; please try again.`);
      return { state: next.state, commands: [{ type: 'log-error', message: 'Model step failed', reason: event.reason }, ...next.commands] };
    }
    case 'over-budget': {
      // The step did not ask the model (again): what it did before that stays, and the turn asks a person.
      const modelCalls = assistants(event.before);
      const next: Active = {
        ...withLog(state, ...event.before),
        counters: counted(state.counters, event.usage, modelCalls),
      };
      if (next.turn.stopping) return stopped(withTurn(next, { unanswered: [] }));
      return {
        state: {
          ...next,
          kind: 'budget-paused',
          over: event.over,
          turn: { ...next.turn, unanswered: [], step: next.turn.step + modelCalls },
        },
        commands: [{ type: 'park-budget', over: event.over, deadlineMs: rules.approvalTimeoutMs }],
      };
    }
    case 'model-answered': {
      const { reply } = event;
      const modelCalls = 1 + assistants(event.before);
      const calls = reply.toolCalls ?? [];
      // the reply's calls need answers in the transcript however the turn goes on (a Stop may have come)
      const next: Active = withTurn(
        { ...withLog(state, ...event.before, reply), counters: counted(state.counters, event.usage, modelCalls) },
        { unanswered: [...calls] },
      );
      if (next.turn.stopping) return stopped(next);
      const stepped = withTurn(next, { step: next.turn.step + modelCalls });
      if (rules.stateful && reply.structured !== undefined)
        return {
          state: { ...stepped, kind: 'answering', calls, next: 0 },
          commands: [{ type: 'apply-answer', structured: reply.structured }],
        };
      if (!calls.length) return endTurn(stepped, stepped.turn.stopping !== false);
      return nextCall({ ...stepped, calls, next: 0 }, rules);
    }
    default:
      return stay(state);
  }
}

/**
 * The reply's call at `next`: answered at once when the model's call is invalid, else parked on an approval
 * or run. After the last one, the model is asked again (with what a parked turn was told meanwhile).
 */
function nextCall(state: Active & Calls, rules: TurnRules): Step {
  const commands: TurnCommand[] = [];
  let current: Active & Calls = state;
  for (;;) {
    const { calls, next } = current;
    if (next >= calls.length) {
      // the declining message was about this reply's calls: the model's next ones are asked again
      let after: Active = current.turn.declining ? withTurn(current, { declining: undefined }) : current;
      if (after.turn.interjection) {
        commands.push({ type: 'record-messages', messages: [after.turn.interjection] });
        after = withTurn(after, { interjection: undefined });
      }
      const { invalidCalls } = after.turn;
      const step =
        invalidCalls > rules.maxToolErrors
          ? finish(after, `I stopped: the model made ${invalidCalls} invalid tool calls in this turn. Please rephrase the request.`)
          : callModel(after, rules);
      return { state: step.state, commands: [...commands, ...step.commands] };
    }
    const call = calls[next]!;
    const spec = rules.findTool(call.name);
    let refusal: unknown;
    let args: JsonObject | undefined;
    if (!spec) {
      refusal = { error: `Unknown tool "${call.name}". Available tools: ${rules.toolNames.join(', ') || 'none'}.` };
    } else {
      const parsed = spec.args.safeParse(call.args);
      if (parsed.success) args = parsed.data as JsonObject;
      else refusal = { error: `Invalid arguments for ${call.name}: ${describeIssues(parsed.error)}` };
    }
    if (!spec || !args) {
      const answered = answer(current, call, call.args, refusal);
      commands.push(...answered.commands);
      current = withTurn({ ...answered.state, next: next + 1 }, { invalidCalls: answered.state.turn.invalidCalls + 1 });
      if (current.turn.stopping) {
        const end = stopped(current);
        return { state: end.state, commands: [...commands, ...end.commands] };
      }
      continue;
    }
    const asks = needsApproval(spec.policy, args);
    if (asks && current.turn.declining) {
      const why = current.turn.declining.text.trim();
      const refused = answer(current, call, args, {
        status: 'rejected',
        error: `Not run: the user declined it with a message instead of approving: "${why}"`,
      });
      commands.push(...refused.commands, { type: 'declined-call', call });
      current = { ...refused.state, next: next + 1 };
      continue;
    }
    if (asks) {
      return {
        state: { ...current, kind: 'awaiting-approval', args },
        commands: [
          ...commands,
          {
            type: 'park-approval',
            call,
            args,
            deadlineMs: spec.policy.deadlineMs ?? rules.approvalTimeoutMs,
            decisions: spec.policy.decisions,
            onTimeout: spec.policy.onTimeout,
            ...(spec.details ? { details: spec.details } : {}),
          },
        ],
      };
    }
    const run = runCall(current, spec, args);
    return { state: run.state, commands: [...commands, ...run.commands] };
  }
}

function runCall(state: Active & Calls, spec: ToolSpec, args: JsonObject): Step {
  const call = state.calls[state.next]!;
  // Stop does not cancel a child workflow (a save pipeline is not torn apart mid-step): the turn stops waiting.
  const runner: CallRunner = spec.runner?.kind === 'child' ? 'child' : 'mcp' in spec ? 'mcp' : 'activity';
  return {
    state: { ...state, kind: 'running-tool', args, runner },
    commands: [{ type: runner === 'child' ? 'run-child' : 'run-tool', call, args }],
  };
}

/** A call's tool message, in the turn's log and written with the next batch. */
function answer<S extends Active>(state: S, call: ToolCall, args: JsonObject, result: unknown, cards?: JsonObject[]): Step & { state: S } {
  const message = toolMessage(call, args, result, cards);
  return {
    state: withTurn(withLog(state, message), { unanswered: state.turn.unanswered.filter((open) => open.id !== call.id) }),
    commands: [{ type: 'record-messages', messages: [message] }],
  };
}

/** After a call was answered: the next one, unless Stop came meanwhile. */
function answered(state: Active & Calls, commands: TurnCommand[], rules: TurnRules): Step {
  const moved = { ...state, next: state.next + 1 };
  const next = state.turn.stopping ? stopped(moved) : nextCall(moved, rules);
  return { state: next.state, commands: [...commands, ...next.commands] };
}

function afterApproval(state: Extract<TurnState, { kind: 'awaiting-approval' }>, outcome: ItemOutcome, rules: TurnRules): Step {
  const { decision, supersededBy, withdrawn } = outcome;
  if (withdrawn) return stopped(state);
  const call = state.calls[state.next]!;
  if (decision.decision === 'reject' || decision.decision === 'no') {
    const why = decision.reason?.trim() || 'no reason given';
    const refused = answer(state, call, state.args, {
      status: 'rejected',
      error: supersededBy
        ? `Not run: the user answered with a message instead of approving: "${why}"`
        : `The user rejected this call: ${why}`,
    });
    return answered(refused.state, refused.commands, rules);
  }
  const spec = rules.findTool(call.name)!;
  let args = state.args;
  if (decision.decision === 'edit' && decision.args) {
    // The decision was checked against the same schema when it came: a failure here is the runtime's own.
    const parsed = spec.args.safeParse(decision.args);
    if (!parsed.success) return nextStep(state, { type: 'failed', reason: 'edited arguments', text: describeIssues(parsed.error) }, rules);
    args = parsed.data as JsonObject;
  }
  return runCall(state, spec, args);
}

function afterTool(
  state: Extract<TurnState, { kind: 'running-tool' }>,
  event: Extract<TurnEvent, { type: 'tool-finished' | 'tool-failed' }>,
  rules: TurnRules,
): Step {
  const call = state.calls[state.next]!;
  if (event.type === 'tool-failed') {
    if (state.turn.stopping) return stopped(state);
    // A child workflow's failure comes back as its result; anything else failing there is the turn's.
    if (state.runner === 'child') return nextStep(state, { type: 'failed', reason: event.reason, text: event.text }, rules);
    return afterTool(state, { type: 'tool-finished', result: { error: `The tool failed (${event.text}).` } }, rules);
  }
  if (state.runner === 'child') {
    const done = answer(state, call, state.args, event.result, event.cards);
    return answered(done.state, done.commands, rules);
  }
  // the tool's activity wrote its message with its record
  const message = toolMessage(call, state.args, event.result);
  return answered(
    withTurn(withLog(state, message), { unanswered: state.turn.unanswered.filter((open) => open.id !== call.id) }),
    [],
    rules,
  );
}

/**
 * Over a budget: approve raises the conversation's budget by one budget's worth and lets this turn go on;
 * reject, a message or the deadline end it with a message.
 */
function afterBudget(state: Extract<TurnState, { kind: 'budget-paused' }>, outcome: ItemOutcome, rules: TurnRules): Step {
  const { decision, timedOut, withdrawn } = outcome;
  if (withdrawn) return stopped(state);
  const commands: TurnCommand[] = [];
  let next: Active = state;
  // A message that refused the item is part of the transcript, before the turn's last word.
  if (next.turn.interjection) {
    commands.push({ type: 'record-messages', messages: [next.turn.interjection] });
    next = withTurn(next, { interjection: undefined });
  }
  const step =
    decision.decision === 'approve'
      ? callModel(
          withTurn({ ...next, counters: { ...next.counters, budgetRaises: next.counters.budgetRaises + 1 } }, { budgetApproved: true }),
          rules,
        )
      : finish(next, budgetRefusal(state.over, timedOut, decision.reason));
  return { state: step.state, commands: [...commands, ...step.commands] };
}

/**
 * A child workflow or an MCP server asks a person something: opened while the turn runs and is not stopping; once
 * it has ended or is stopping, the asker is refused at once and nothing opens.
 */
function asked(state: TurnState, event: Extract<TurnEvent, { type: 'asked' }>): Step {
  const { item, deadlineMs, onTimeout } = event;
  if (state.kind === 'idle' || state.turn.stopping || event.outlived) {
    const end = state.kind !== 'idle' && state.turn.stopping ? state.turn.stopping : state.ended;
    const outcome: ItemOutcome = { decision: withdrawal(item, onTimeout, end), timedOut: false, withdrawn: true };
    return { state, commands: [{ type: 'reply-asker', id: item.id, outcome }] };
  }
  return { state, commands: [{ type: 'open-item', item, deadlineMs, onTimeout }] };
}

/**
 * An item's wait ended: the item closes as its outcome says, and the outcome moves the turn (its own approval or
 * budget item) or goes back to whoever asked. A cancelled wait is Stop's (or a branch move's): withdrawn, in
 * its words; one cancelled otherwise while the turn still waits on its own item fails the turn.
 */
function waitEnded(
  state: TurnState,
  event: Extract<TurnEvent, { type: 'wait-over' | 'deadline-passed' | 'wait-cancelled' }>,
  rules: TurnRules,
): Step {
  const entry = state.asked.find((asked) => asked.id === event.id);
  if (!entry) return stay(state);
  const { id } = entry;
  const mine = entry.own && state.kind !== 'idle' && entry.turn === state.counters.turns;
  let outcome: ItemOutcome;
  if (event.type === 'wait-cancelled') {
    const stopping = state.kind === 'idle' ? false : state.turn.stopping;
    if (mine && !stopping)
      return nextStep(
        { ...state, asked: state.asked.filter((asked) => asked !== entry) },
        { type: 'failed', reason: 'the wait for a person was cancelled', text: 'cancelled' },
        rules,
      );
    outcome = { decision: withdrawal(entry, entry.onTimeout, stopping || state.ended), timedOut: false, withdrawn: true };
  } else if (event.type === 'deadline-passed' || !entry.answer) {
    outcome = { decision: { pendingId: id, decision: entry.onTimeout, reason: 'No decision before the deadline.' }, timedOut: true };
  } else {
    const { decision, supersededBy } = entry.answer;
    outcome = { decision, timedOut: false, ...(supersededBy !== undefined ? { supersededBy } : {}) };
  }
  const closed: TurnState = { ...state, asked: state.asked.filter((asked) => asked !== entry) };
  const close: TurnCommand = { type: 'close-item', id, outcome };
  if (!entry.own) return { state: closed, commands: [close, { type: 'reply-asker', id, outcome }] };
  // an item of a turn that has ended (it failed while it waited) moves nothing: the turn now running did not ask it
  const decided: TurnEvent | undefined = !mine
    ? undefined
    : closed.kind === 'awaiting-approval'
      ? { type: 'approval-decided', outcome }
      : closed.kind === 'budget-paused'
        ? { type: 'budget-decided', outcome }
        : undefined;
  if (!decided) return { state: closed, commands: [close] };
  const next = nextStep(closed, decided, rules);
  return { state: next.state, commands: [close, ...next.commands] };
}

/** Ends the turn with a message of the runtime's own (limits, failures), written with what is unsaved. */
function finish(state: Active, text: string): Step {
  return { state: { ...state, kind: 'finishing' } as TurnState, commands: [{ type: 'say', text, record: true }] };
}

/** Ends a stopped turn's books: every call it left unanswered gets a tool message, and the stop an event. */
function stopped(state: Active): Step {
  const running = state.kind === 'running-tool' ? state : undefined;
  const messages = state.turn.unanswered.map((call) =>
    toolMessage(
      call,
      call.args,
      stoppedCallResult(
        running?.runner === 'child' && running.calls[running.next]!.id === call.id,
        running?.runner === 'mcp' && running.calls[running.next]!.id === call.id,
        state.turn.stopping || 'stop',
      ),
    ),
  );
  const log = [...state.log, ...messages];
  const cut = log.findLast((message) => message.role === 'assistant' && message.stopped);
  const end = endTurn(withTurn({ ...state, log }, { unanswered: [] }), true);
  return {
    state: end.state,
    commands: [
      ...messages.map((message): TurnCommand => ({ type: 'record-messages', messages: [message] })),
      {
        type: 'record-events',
        events: [
          {
            key: `turn-stopped:${log[0]!.id}`,
            type: 'turn.stopped',
            data: {
              turn: state.counters.turns,
              ...(cut ? { messageId: cut.id } : {}),
              ...(state.turn.stopping === 'branch' ? { reason: 'branch' } : {}),
            },
          },
        ],
      },
      ...end.commands,
    ],
  };
}

/**
 * The turn is over. Its turn-scoped items belong to it (one that failed while parked must not leave them
 * open); a message sent while a stopped turn was parked is kept; what is unsaved is written.
 */
function endTurn(state: Active, stoppedTurn: boolean): Step {
  const { interjection } = state.turn;
  const boundary = state.boundary + 1;
  return {
    state: {
      kind: 'idle',
      counters: state.counters,
      boundary,
      stoppedAt: stoppedTurn ? boundary : state.stoppedAt,
      log: state.log,
      asked: state.asked,
      ...(state.ended ? { ended: state.ended } : {}),
    },
    commands: [
      stoppedTurn ? { type: 'close-turn-items', withdrawn: state.turn.stopping || 'stop' } : { type: 'close-turn-items' },
      ...(stoppedTurn && interjection ? [{ type: 'record-messages', messages: [interjection] } satisfies TurnCommand] : []),
      { type: 'idle-details' },
      { type: 'flush-if-unsaved' },
    ],
  };
}
