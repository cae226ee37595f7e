// The turn's transitions as a pure function: no worker, no server, no ports. Each test walks the machine
// through events and checks the state it reaches and the commands it asks the workflow for, in order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import type { ChatMessage, DecisionInput, PendingItem, ToolCall } from '../../src/shared/messages.ts';
import { SERVER_CALL_STOPPED } from '../../src/shared/stopped-call.ts';
import { AUTO, NEEDS_APPROVAL, type ToolSpec } from '../../src/shared/tool-spec.ts';
import type { ItemOutcome } from '../../src/workflows/pending-items.ts';
import {
  AWAITED,
  STOP_ARRIVAL_MS,
  type TurnCommand,
  type TurnEvent,
  type TurnRules,
  type TurnState,
  allowance,
  answerTo,
  idleState,
  nextStep,
  statusOf,
} from '../../src/workflows/turn-machine.ts';

const tools: ToolSpec[] = [
  { name: 'lookup', description: '', args: z.object({ user: z.string() }), policy: AUTO },
  { name: 'cancel_order', description: '', args: z.object({ orderId: z.string() }), policy: NEEDS_APPROVAL, details: { via: 'shop' } },
  // asks a person above 100 only: a predicate of the call's checked arguments
  {
    name: 'refund',
    description: '',
    args: z.object({ amount: z.number() }),
    policy: { ...NEEDS_APPROVAL, approval: (args) => (args.amount as number) > 100 },
  },
  {
    name: 'risky',
    description: '',
    args: z.object({}),
    policy: {
      ...NEEDS_APPROVAL,
      approval: () => {
        throw new Error('a bug in the predicate');
      },
    },
  },
  {
    name: 'save',
    description: '',
    args: z.object({}),
    policy: AUTO,
    runner: { kind: 'child', workflow: 'saveWorkflow', idPrefix: 'save' },
  },
  Object.assign({ name: 'remote', description: '', args: z.object({}), policy: AUTO }, { mcp: { server: 'time' } }),
];

const rules = (extra: Partial<TurnRules> = {}): TurnRules => ({
  maxSteps: 4,
  maxToolErrors: 1,
  approvalTimeoutMs: 60_000,
  stateful: false,
  findTool: (name) => tools.find((tool) => tool.name === name),
  toolNames: tools.map((tool) => tool.name),
  ...extra,
});

const user: ChatMessage = { id: 'u1', role: 'user', text: 'hi' };
const tokens = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
const call = (id: string, name: string, args: Record<string, unknown> = {}): ToolCall => ({ id, name, args });
const reply = (id: string, toolCalls?: ToolCall[], extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id,
  role: 'assistant',
  text: toolCalls ? '' : 'done',
  ...(toolCalls ? { toolCalls } : {}),
  ...extra,
});
const answered = (message: ChatMessage, before: ChatMessage[] = []): TurnEvent => ({
  type: 'model-answered',
  reply: message,
  before,
  usage: tokens,
});
const decided = (
  decision: DecisionInput['decision'],
  extra: Partial<ItemOutcome> & { reason?: string; args?: DecisionInput['args'] } = {},
): ItemOutcome => {
  const { reason, args, ...outcome } = extra;
  return {
    decision: { pendingId: 'p1', decision, ...(reason ? { reason } : {}), ...(args ? { args } : {}) },
    timedOut: false,
    ...outcome,
  };
};

/** Feeds the events in order; every step's awaited command must be its last. */
function walk(r: TurnRules, state: TurnState, ...events: TurnEvent[]): { state: TurnState; commands: TurnCommand[]; last: TurnCommand[] } {
  const commands: TurnCommand[] = [];
  let last: TurnCommand[] = [];
  for (const event of events) {
    const step = nextStep(state, event, r);
    step.commands.forEach((command, index) => {
      if (AWAITED.has(command.type)) assert.equal(index, step.commands.length - 1, `${command.type} ends its step (after ${event.type})`);
    });
    state = step.state;
    last = step.commands;
    commands.push(...step.commands);
  }
  return { state, commands, last };
}

const start = (r = rules()) =>
  walk(r, idleState({ turns: 2, usage: { ...tokens, calls: 3 }, budgetRaises: 0 }), { type: 'message', message: user });
const types = (commands: TurnCommand[]) => commands.map((command) => command.type);
const recorded = (commands: TurnCommand[]) =>
  commands.flatMap((command) => (command.type === 'record-messages' ? command.messages : [])).map((message) => message.id);
const toolResult = (state: TurnState, id: string) =>
  state.log.find((message) => message.id === id)?.result as { status?: string; error?: string };
const END = ['close-turn-items', 'idle-details', 'flush-if-unsaved'];
/** the driver opened an item: the turn's own approval (or someone else's question, `own` false) */
const opened = (id: string, own = true): Extract<TurnEvent, { type: 'parked' }> => ({
  type: 'parked',
  id,
  decisions: ['approve', 'reject', 'edit'],
  onTimeout: 'reject',
  deadlineMs: 60_000,
  own,
});

describe('turn machine: a turn and its model steps', () => {
  test('a regenerate starts a turn from a stored user message: nothing recorded, its answer alone in the log', () => {
    const idle = idleState({ turns: 2, usage: { ...tokens, calls: 3 }, budgetRaises: 0 });
    const { state, commands } = walk(rules(), idle, { type: 'message', message: user, stored: true });
    assert.equal(state.kind, 'calling-model');
    assert.deepEqual(types(commands), ['new-scope', 'details', 'call-model']);
    assert.equal(state.counters.turns, 3);
    assert.deepEqual(state.log, []);
    const answer = walk(rules(), state, answered(reply('a1')));
    assert.deepEqual(
      answer.state.log.map((message) => message.id),
      ['a1'],
    );
    assert.deepEqual(recorded(commands), []);
  });

  test('a message starts a turn: a scope, the user message recorded, the model asked with the steps left', () => {
    const { state, commands } = start();
    assert.equal(state.kind, 'calling-model');
    assert.equal(state.counters.turns, 3);
    assert.equal(state.counters.turnsThisRun, 1);
    assert.deepEqual(state.log, [user]);
    assert.deepEqual(commands, [
      { type: 'new-scope' },
      { type: 'record-messages', messages: [user] },
      { type: 'details', text: 'Turn 3, step 1: waiting for the model.' },
      { type: 'call-model', step: 1, summary: 'model: turn 3, step 1 (runs tools that need no person, then asks again)', extraSteps: 3 },
    ]);
  });

  test('without inline tools the step may not run tools itself, and its summary says nothing of it', () => {
    const { commands } = start(rules({ inlineTools: false }));
    assert.deepEqual(commands.at(-1), { type: 'call-model', step: 1, summary: 'model: turn 3, step 1', extraSteps: 0 });
  });

  test('a reply without tool calls ends the turn: counted, logged, a boundary, turn items closed, the rest written', () => {
    const r = rules();
    const first = start(r).state;
    const { state, commands } = walk(r, first, answered(reply('r2'), [reply('r1', [call('r1.1', 'lookup', { user: 'a' })])]));
    assert.equal(state.kind, 'idle');
    assert.equal(state.boundary, 1);
    assert.equal(state.stoppedAt, -1);
    assert.deepEqual(state.counters.usage, { inputTokens: 20, outputTokens: 10, totalTokens: 30, calls: 5 }, 'two model calls in one step');
    assert.deepEqual(
      state.log.map((message) => message.id),
      ['u1', 'r1', 'r2'],
    );
    assert.deepEqual(types(commands), END);
  });

  test('a new message after a turn starts the next one from where the last one counted', () => {
    const r = rules();
    const done = walk(r, start(r).state, answered(reply('r1'))).state;
    const { state } = walk(r, done, { type: 'message', message: { id: 'u2', role: 'user', text: 'again' } });
    assert.equal(state.kind, 'calling-model');
    assert.equal(state.counters.turns, 4);
    assert.equal(state.counters.turnsThisRun, 2);
    assert.equal(state.boundary, 1);
    assert.deepEqual(
      state.log.map((message) => message.id),
      ['u2'],
    );
  });

  test('the step limit ends the turn with a message of its own, written, then the turn ends', () => {
    const r = rules({ maxSteps: 2 });
    let { state, commands } = walk(r, start(r).state, answered(reply('r2', [call('c1', 'lookup', { user: 'a' })]), [reply('r1')]));
    assert.equal(state.kind, 'running-tool');
    ({ state, commands } = walk(r, state, { type: 'tool-finished', result: { ok: true } }));
    assert.equal(state.kind, 'finishing');
    assert.deepEqual(commands, [
      { type: 'say', text: 'I stopped after 2 steps without reaching an answer. Please rephrase or narrow the request.', record: true },
    ]);
    const said: ChatMessage = { id: 'm1', role: 'assistant', text: 'stopped' };
    ({ state, commands } = walk(r, state, { type: 'said', message: said }));
    assert.deepEqual(types(commands), ['flush']);
    ({ state, commands } = walk(r, state, { type: 'flushed' }));
    assert.equal(state.kind, 'idle');
    assert.equal(state.log.at(-1), said);
    assert.deepEqual(types(commands), END);
  });

  test('a model that fails ends the turn with a message saying so, and the error logged', () => {
    const r = rules();
    const { state, commands } = walk(r, start(r).state, {
      type: 'model-failed',
      reason: 'Error: overloaded',
      text: 'overloaded',
      unsaved: { messages: [user], events: [] },
    });
    assert.equal(state.kind, 'finishing');
    assert.deepEqual(commands.slice(-2), [
      { type: 'log-error', message: 'Model step failed', reason: 'Error: overloaded' },
      { type: 'say', text: 'The model could not answer (overloaded). Nothing else was done; please try again.', record: true },
    ]);
  });

  test("a stateful agent's answer is applied, what it said written, and the turn ends when it calls nothing", () => {
    const r = rules({ stateful: true });
    let { state, commands } = walk(r, start(r).state, answered(reply('r1', undefined, { structured: { say: 'hi' } })));
    assert.equal(state.kind, 'answering');
    assert.deepEqual(commands.at(-1), { type: 'apply-answer', structured: { say: 'hi' } });
    const said: ChatMessage = { id: 'k1', role: 'assistant', text: 'a patchset' };
    ({ state, commands } = walk(r, state, { type: 'answer-applied', said: [said] }));
    assert.deepEqual(types(commands), ['flush']);
    ({ state, commands } = walk(r, state, { type: 'flushed' }));
    assert.equal(state.kind, 'idle');
    assert.deepEqual(types(commands), END);
    assert.equal(state.log.at(-1), said);
  });

  test('an unrelated event in a phase that does not await it changes nothing', () => {
    const r = rules();
    const first = start(r).state;
    for (const event of [
      { type: 'flushed' },
      { type: 'tool-finished', result: {} },
      { type: 'approval-decided', outcome: decided('approve') },
    ] as TurnEvent[])
      assert.deepEqual(nextStep(first, event, r), { state: first, commands: [] });
  });
});

describe('turn machine: tool calls', () => {
  test('a lookup runs as an activity; its message (recorded by the activity) is logged, and the model asked again', () => {
    const r = rules();
    let { state, commands } = walk(r, start(r).state, answered(reply('r1', [call('c1', 'lookup', { user: 'a' })])));
    assert.equal(state.kind, 'running-tool');
    assert.equal(state.kind === 'running-tool' && state.runner, 'activity');
    assert.deepEqual(commands.at(-1), { type: 'run-tool', call: call('c1', 'lookup', { user: 'a' }), args: { user: 'a' } });
    ({ state, commands } = walk(r, state, { type: 'tool-finished', result: { ok: true } }));
    assert.deepEqual(toolResult(state, 'c1'), { ok: true });
    assert.deepEqual(recorded(commands), [], 'the runTool activity writes the tool message itself');
    assert.deepEqual(commands.at(-1), {
      type: 'call-model',
      step: 2,
      summary: 'model: turn 3, step 2 (runs tools that need no person, then asks again)',
      extraSteps: 2,
    });
    assert.ok(state.kind !== 'idle' && state.turn.unanswered.length === 0);
  });

  test('a tool that fails all its attempts is answered with the failure, and the turn goes on', () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'lookup', { user: 'a' })]))).state;
    const { state, commands } = walk(r, running, { type: 'tool-failed', text: 'database down', reason: 'Error' });
    assert.deepEqual(toolResult(state, 'c1'), { error: 'The tool failed (database down).' });
    assert.equal(commands.at(-1)!.type, 'call-model');
  });

  test('a child workflow runs the tool; its result and cards are recorded by the turn', () => {
    const r = rules();
    let { state, commands } = walk(r, start(r).state, answered(reply('r1', [call('c1', 'save')])));
    assert.deepEqual(commands.at(-1), { type: 'run-child', call: call('c1', 'save'), args: {} });
    ({ state, commands } = walk(r, state, { type: 'tool-finished', result: { saved: true }, cards: [{ title: 'x' }] }));
    assert.deepEqual(recorded(commands), ['c1']);
    assert.deepEqual(state.log.find((message) => message.id === 'c1')!.cards, [{ title: 'x' }]);
  });

  test('a child that fails other than with its result fails the turn', () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'save')]))).state;
    const { state, commands } = walk(r, running, { type: 'tool-failed', text: 'boom', reason: 'ChildWorkflowFailure' });
    assert.equal(state.kind, 'failing');
    assert.deepEqual(commands, [
      // the user is told the failure's words; the log only its kind
      { type: 'log-error', message: 'Turn failed', reason: 'ChildWorkflowFailure' },
      { type: 'say', text: 'The turn failed (boom). Please try again.', record: false },
    ]);
  });

  test('unknown tools and bad arguments are answered to the model; past the limit the turn stops', () => {
    const r = rules({ maxToolErrors: 1 });
    let { state, commands } = walk(r, start(r).state, answered(reply('r1', [call('c1', 'nope'), call('c2', 'lookup', { user: 1 })])));
    assert.deepEqual(recorded(commands), ['c1', 'c2']);
    assert.match(
      toolResult(state, 'c1').error!,
      /^Unknown tool "nope". Available tools: lookup, cancel_order, refund, risky, save, remote\.$/,
    );
    assert.match(toolResult(state, 'c2').error!, /^Invalid arguments for lookup: /);
    assert.equal(state.kind, 'finishing');
    assert.deepEqual(commands.at(-1), {
      type: 'say',
      text: 'I stopped: the model made 2 invalid tool calls in this turn. Please rephrase the request.',
      record: true,
    });
    ({ state } = walk(r, state, { type: 'said', message: reply('m1') }, { type: 'flushed' }));
    assert.equal(state.kind, 'idle');
  });

  test('one invalid call within the limit is answered and the valid call after it still runs', () => {
    const r = rules({ maxToolErrors: 1 });
    const { state, commands } = walk(r, start(r).state, answered(reply('r1', [call('c1', 'nope'), call('c2', 'lookup', { user: 'a' })])));
    assert.equal(state.kind, 'running-tool');
    assert.deepEqual(types(commands).slice(-2), ['record-messages', 'run-tool']);
  });
});

describe('turn machine: approvals', () => {
  const parked = (r = rules()) => walk(r, start(r).state, answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })])));

  test("a call that needs approval parks the turn on an item with the tool's decisions, deadline and details", () => {
    const { state, commands } = parked();
    assert.equal(state.kind, 'awaiting-approval');
    assert.deepEqual(commands.at(-1), {
      type: 'park-approval',
      call: call('c1', 'cancel_order', { orderId: '7' }),
      args: { orderId: '7' },
      deadlineMs: 60_000,
      decisions: ['approve', 'reject', 'edit'],
      onTimeout: 'reject',
      details: { via: 'shop' },
    });
  });

  test('approval as a predicate of the call: a small refund runs at once, a large one parks, one whose predicate throws asks', () => {
    const r = rules();
    const small = walk(r, start(r).state, answered(reply('r1', [call('c1', 'refund', { amount: 40 })])));
    assert.equal(small.state.kind, 'running-tool');
    assert.deepEqual(small.last.at(-1), { type: 'run-tool', call: call('c1', 'refund', { amount: 40 }), args: { amount: 40 } });
    const large = walk(r, start(r).state, answered(reply('r1', [call('c1', 'refund', { amount: 400 })])));
    assert.equal(large.state.kind, 'awaiting-approval');
    assert.equal(large.last.at(-1)!.type, 'park-approval');
    const risky = walk(r, start(r).state, answered(reply('r1', [call('c1', 'risky')])));
    assert.equal(risky.state.kind, 'awaiting-approval', 'a predicate that fails asks a person rather than run unasked');
  });

  test('a declining message declines the calls of the reply that would ask, and lets one its predicate runs unasked run', () => {
    const r = rules();
    const calls = [
      call('c1', 'cancel_order', { orderId: '7' }),
      call('c2', 'refund', { amount: 400 }),
      call('c3', 'refund', { amount: 5 }),
    ];
    let { state } = walk(r, start(r).state, answered(reply('r1', calls)), opened('p1'));
    const no: ChatMessage = { id: 'u2', role: 'user', text: 'stop that' };
    ({ state } = walk(r, state, { type: 'message', message: no, decline: true }));
    const { state: next, commands } = walk(r, state, {
      type: 'approval-decided',
      outcome: decided('reject', { reason: 'stop that', supersededBy: 'u2' }),
    });
    assert.equal(toolResult(next, 'c1').status, 'rejected');
    assert.equal(toolResult(next, 'c2').status, 'rejected');
    assert.ok(commands.some((command) => command.type === 'declined-call' && command.call.id === 'c2'));
    assert.deepEqual(commands.at(-1), { type: 'run-tool', call: calls[2], args: { amount: 5 } });
  });

  test('an item opened bumps the boundary (the handlers waiting answer), the phase stays', () => {
    const r = rules();
    const { state } = walk(r, parked(r).state, opened('p1'));
    assert.equal(state.kind, 'awaiting-approval');
    assert.equal(state.boundary, 1);
  });

  test("the status is the machine's: waiting from the item opened until a decision, running again once one came", () => {
    const r = rules();
    const idle = idleState({ turns: 0, usage: { ...tokens, calls: 0 }, budgetRaises: 0 });
    assert.equal(statusOf(idle), 'idle');
    assert.equal(statusOf(start(r).state), 'running');
    let { state } = parked(r);
    assert.equal(statusOf(state), 'running', 'asking for the item is not waiting yet: none is open');
    ({ state } = walk(r, state, opened('p1')));
    assert.equal(statusOf(state), 'waiting');
    assert.equal(answerTo(state, 'p1'), undefined);
    const decision: DecisionInput = { pendingId: 'p1', decision: 'approve' };
    const step = nextStep(state, { type: 'decided', decision }, r);
    assert.deepEqual(step.commands, [], "the wait on the item reports it (the driver's condition ends)");
    assert.equal(statusOf(step.state), 'running');
    assert.deepEqual(answerTo(step.state, 'p1'), { decision });
    const again = nextStep(step.state, { type: 'decided', decision: { pendingId: 'p1', decision: 'reject' } }, r);
    assert.deepEqual(answerTo(again.state, 'p1'), { decision }, 'the first answer stays');
    const closed = walk(r, step.state, { type: 'wait-over', id: 'p1' }).state;
    assert.equal(answerTo(closed, 'p1'), undefined);
    assert.deepEqual(closed.asked, []);
  });

  test('a decision on an item this turn did not ask, or with no turn running, changes nothing', () => {
    const r = rules();
    const waiting = walk(r, parked(r).state, opened('p1')).state;
    const other = nextStep(waiting, { type: 'decided', decision: { pendingId: 'p9', decision: 'approve' } }, r);
    assert.equal(statusOf(other.state), 'waiting');
    const idle = idleState({ turns: 0, usage: { ...tokens, calls: 0 }, budgetRaises: 0 });
    assert.deepEqual(nextStep(idle, { type: 'decided', decision: { pendingId: 'p1', decision: 'approve' } }, r), {
      state: idle,
      commands: [],
    });
  });

  test('a message answers the items through the driver, which tells the machine what it answered', () => {
    const r = rules();
    const waiting = walk(r, parked(r).state, opened('p1')).state;
    const said: ChatMessage = { id: 'u2', role: 'user', text: 'no' };
    const asked = nextStep(waiting, { type: 'message', message: said }, r);
    assert.deepEqual(asked.commands, [{ type: 'answer-items', message: said }]);
    assert.equal(statusOf(asked.state), 'waiting', 'until the driver says what the message answered');
    const decision: DecisionInput = { pendingId: 'p1', decision: 'reject', reason: 'no' };
    const { state } = walk(r, asked.state, { type: 'items-answered', answers: [{ decision, supersededBy: 'u2' }] });
    assert.equal(statusOf(state), 'running');
    assert.deepEqual(answerTo(state, 'p1'), { decision, supersededBy: 'u2' });
  });

  test('approve runs the tool; edit runs it with the edited arguments', () => {
    const r = rules();
    const approved = walk(r, parked(r).state, { type: 'approval-decided', outcome: decided('approve') });
    assert.equal(approved.state.kind, 'running-tool');
    assert.deepEqual(approved.commands.at(-1), {
      type: 'run-tool',
      call: call('c1', 'cancel_order', { orderId: '7' }),
      args: { orderId: '7' },
    });
    const edited = walk(r, parked(r).state, { type: 'approval-decided', outcome: decided('edit', { args: { orderId: '8' } }) });
    assert.deepEqual(edited.commands.at(-1), {
      type: 'run-tool',
      call: call('c1', 'cancel_order', { orderId: '7' }),
      args: { orderId: '8' },
    });
    assert.equal(edited.state.kind === 'running-tool' && edited.state.args.orderId, '8');
  });

  test('reject answers the call with the reason and asks the model again', () => {
    const r = rules();
    const { state, commands } = walk(r, parked(r).state, {
      type: 'approval-decided',
      outcome: decided('reject', { reason: ' too late ' }),
    });
    assert.deepEqual(toolResult(state, 'c1'), { status: 'rejected', error: 'The user rejected this call: too late' });
    assert.deepEqual(recorded(commands), ['c1']);
    assert.equal(commands.at(-1)!.type, 'call-model');
  });

  test('a message while parked answers the items, and enters the transcript after the tool results', () => {
    const r = rules();
    const said: ChatMessage = { id: 'u2', role: 'user', text: 'no, wait' };
    let { state, commands } = walk(r, parked(r).state, { type: 'message', message: said });
    assert.deepEqual(commands, [{ type: 'answer-items', message: said }]);
    assert.equal(state.kind !== 'idle' && state.turn.interjection, said);
    ({ state, commands } = walk(r, state, {
      type: 'approval-decided',
      outcome: decided('reject', { reason: 'no, wait', supersededBy: 'u2' }),
    }));
    assert.deepEqual(toolResult(state, 'c1'), {
      status: 'rejected',
      error: 'Not run: the user answered with a message instead of approving: "no, wait"',
    });
    assert.deepEqual(recorded(commands), ['c1', 'u2'], 'the message after the tool result');
    assert.ok(state.kind !== 'idle' && state.turn.interjection === undefined);
  });

  test('an approval nobody decided closes with its timeout decision', () => {
    const r = rules();
    const { state } = walk(r, parked(r).state, { type: 'approval-decided', outcome: decided('reject', { timedOut: true }) });
    assert.deepEqual(toolResult(state, 'c1'), { status: 'rejected', error: 'The user rejected this call: no reason given' });
  });

  test('a second decision, once the turn went on, changes nothing', () => {
    const r = rules();
    const running = walk(r, parked(r).state, { type: 'approval-decided', outcome: decided('approve') }).state;
    assert.deepEqual(nextStep(running, { type: 'approval-decided', outcome: decided('reject') }, r), { state: running, commands: [] });
    const over = walk(r, running, { type: 'tool-finished', result: {} }, answered(reply('r2'))).state;
    assert.equal(over.kind, 'idle');
    assert.deepEqual(nextStep(over, { type: 'approval-decided', outcome: decided('reject') }, r), { state: over, commands: [] });
  });
});

const approvalItem = (id: string): PendingItem => ({
  id,
  kind: 'approval',
  tool: 'save',
  callId: 'c1',
  args: {},
  decisions: ['approve', 'reject'],
  expiresAt: '2026-01-01T00:01:00.000Z',
});

describe('turn machine: waiting for a person', () => {
  const parkedOn = (r: TurnRules) =>
    walk(r, start(r).state, answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })])), opened('p1')).state;

  test('an item opened is published, then its deadline starts: a timer command, after the write', () => {
    const r = rules();
    const waiting = walk(r, start(r).state, answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })])));
    const { state, commands } = walk(r, waiting.state, opened('p1'));
    assert.deepEqual(commands, [{ type: 'publish-item', id: 'p1' }]);
    assert.equal(statusOf(state), 'waiting');
    assert.deepEqual(walk(r, state, { type: 'item-published', id: 'p1' }).commands, [
      { type: 'start-deadline', id: 'p1', deadlineMs: 60_000 },
    ]);
  });

  test('a decision ends the wait: the item closes as decided, then the call runs', () => {
    const r = rules();
    const decision: DecisionInput = { pendingId: 'p1', decision: 'approve' };
    const { state, commands } = walk(r, parkedOn(r), { type: 'decided', decision }, { type: 'wait-over', id: 'p1' });
    assert.deepEqual(commands[0], { type: 'close-item', id: 'p1', outcome: { decision, timedOut: false } });
    assert.equal(commands.at(-1)!.type, 'run-tool');
    assert.equal(state.kind, 'running-tool');
    assert.deepEqual(state.asked, []);
  });

  test("the deadline passing closes the item with the policy's timeout decision, in words, and the call is refused", () => {
    const r = rules();
    const { state, commands } = walk(r, parkedOn(r), { type: 'deadline-passed', id: 'p1' });
    assert.deepEqual(commands[0], {
      type: 'close-item',
      id: 'p1',
      outcome: { decision: { pendingId: 'p1', decision: 'reject', reason: 'No decision before the deadline.' }, timedOut: true },
    });
    assert.equal(toolResult(state, 'c1').status, 'rejected');
    assert.equal(state.kind, 'calling-model');
  });

  test('a message that answered the item: the outcome says which message, and the item closes with it', () => {
    const r = rules();
    const decision: DecisionInput = { pendingId: 'p1', decision: 'reject', reason: 'no' };
    const { commands } = walk(
      r,
      parkedOn(r),
      { type: 'items-answered', answers: [{ decision, supersededBy: 'u2' }] },
      { type: 'wait-over', id: 'p1' },
    );
    assert.deepEqual(commands[0], { type: 'close-item', id: 'p1', outcome: { decision, timedOut: false, supersededBy: 'u2' } });
  });

  test("Stop cancels the wait: the item is withdrawn in Stop's words; a branch move withdraws it in its own", () => {
    const r = rules();
    for (const [event, reason] of [
      ['stop', 'The user pressed Stop; the turn ended.'],
      ['branch-left', 'withdrawn: the conversation moved to another branch'],
    ] as const) {
      const { state, commands } = walk(r, parkedOn(r), { type: event }, { type: 'wait-cancelled', id: 'p1' });
      assert.deepEqual(
        commands.find((command) => command.type === 'close-item'),
        {
          type: 'close-item',
          id: 'p1',
          outcome: { decision: { pendingId: 'p1', decision: 'reject', reason }, timedOut: false, withdrawn: true },
        },
      );
      assert.equal(state.kind, 'idle');
      assert.equal(state.stoppedAt, state.boundary);
    }
  });

  test('a wait cancelled by anything but Stop fails the turn', () => {
    const r = rules();
    const { state, commands } = walk(r, parkedOn(r), { type: 'wait-cancelled', id: 'p1' });
    assert.equal(state.kind, 'failing');
    assert.ok(types(commands).includes('log-error'));
  });

  test('a budget item waits the same way: its deadline passing ends the turn in words, an approval asks the model again', () => {
    const r = rules();
    const over = { scope: 'conversation' as const, spent: 120, limit: 100 };
    const paused = walk(r, start(r).state, { type: 'over-budget', over, before: [], usage: tokens });
    assert.deepEqual(paused.last, [{ type: 'park-budget', over, deadlineMs: 60_000 }]);
    const waiting = walk(r, paused.state, { ...opened('b1'), decisions: ['approve', 'reject'] }).state;
    assert.equal(statusOf(waiting), 'waiting');
    const expired = walk(r, waiting, { type: 'deadline-passed', id: 'b1' });
    assert.equal(expired.commands[0]!.type, 'close-item');
    assert.equal(expired.state.kind, 'finishing');
    const approved = walk(
      r,
      waiting,
      { type: 'decided', decision: { pendingId: 'b1', decision: 'approve' } },
      { type: 'wait-over', id: 'b1' },
    );
    assert.equal(approved.state.kind, 'calling-model');
    assert.equal(approved.state.counters.budgetRaises, 1);
  });

  test("a child's question while the call runs: opened, its outcome handed back to the child when its wait ends", () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'save')]))).state;
    const item = approvalItem('q1');
    let { state, commands } = walk(r, running, { type: 'asked', item, deadlineMs: 60_000, onTimeout: 'reject' });
    assert.deepEqual(commands, [{ type: 'open-item', item, deadlineMs: 60_000, onTimeout: 'reject' }]);
    ({ state } = walk(r, state, { ...opened('q1', false), decisions: item.decisions }, { type: 'item-published', id: 'q1' }));
    assert.equal(statusOf(state), 'waiting');
    const decision: DecisionInput = { pendingId: 'q1', decision: 'approve' };
    ({ state, commands } = walk(r, state, { type: 'decided', decision }, { type: 'wait-over', id: 'q1' }));
    const outcome = { decision, timedOut: false };
    assert.deepEqual(commands, [
      { type: 'close-item', id: 'q1', outcome },
      { type: 'reply-asker', id: 'q1', outcome },
    ]);
    assert.equal(state.kind, 'running-tool', 'the turn still waits for the child');
    assert.equal(statusOf(state), 'running');
  });

  test('a question asked once the turn is stopping, or has ended, is refused at once: nothing opens', () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'save')])));
    const item = approvalItem('q1');
    const stopping = walk(r, running.state, { type: 'branch-left' }).state;
    const refused = {
      type: 'reply-asker',
      id: 'q1',
      outcome: {
        decision: { pendingId: 'q1', decision: 'reject', reason: 'withdrawn: the conversation moved to another branch' },
        timedOut: false,
        withdrawn: true,
      },
    };
    assert.deepEqual(walk(r, stopping, { type: 'asked', item, deadlineMs: 1, onTimeout: 'reject' }).commands, [refused]);
    const ended = walk(r, stopping, { type: 'tool-failed', text: 'stopped', reason: 'Error' }).state;
    assert.equal(ended.kind, 'idle');
    assert.deepEqual(walk(r, ended, { type: 'asked', item, deadlineMs: 1, onTimeout: 'reject' }).commands, [refused]);
  });

  test('a child that outlived its turn (left on another branch) asks no one, even while a later turn runs: refused in the words that ended it', () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'save')]))).state;
    const left = walk(r, running, { type: 'branch-left' }, { type: 'tool-failed', text: 'stopped', reason: 'Error' }).state;
    const next = walk(r, left, { type: 'message', message: { id: 'u9', role: 'user', text: 'again' } }).state;
    const item = approvalItem('q1');
    const { state, commands } = walk(r, next, { type: 'asked', item, deadlineMs: 60_000, onTimeout: 'reject', outlived: true });
    assert.deepEqual(commands, [
      {
        type: 'reply-asker',
        id: 'q1',
        outcome: {
          decision: { pendingId: 'q1', decision: 'reject', reason: 'withdrawn: the conversation moved to another branch' },
          timedOut: false,
          withdrawn: true,
        },
      },
    ]);
    assert.equal(statusOf(state), 'running');
  });

  test("a child's item whose wait ends after its stopped turn did is withdrawn in that turn's words, and only the running turn's items make it wait", () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'save')]))).state;
    const item = approvalItem('q1');
    let { state } = walk(
      r,
      running,
      { type: 'asked', item, deadlineMs: 60_000, onTimeout: 'reject' },
      { ...opened('q1', false), decisions: item.decisions },
    );
    ({ state } = walk(r, state, { type: 'stop' }, { type: 'tool-failed', text: 'stopped', reason: 'Error' }));
    assert.equal(state.kind, 'idle');
    const next = walk(r, state, { type: 'message', message: { id: 'u9', role: 'user', text: 'again' } }).state;
    assert.equal(statusOf(next), 'running', "the last turn's item does not make this one wait");
    const { commands } = walk(r, next, { type: 'wait-cancelled', id: 'q1' });
    const outcome = {
      decision: { pendingId: 'q1', decision: 'reject', reason: 'The user pressed Stop; the turn ended.' },
      timedOut: false,
      withdrawn: true,
    };
    assert.deepEqual(commands, [
      { type: 'close-item', id: 'q1', outcome },
      { type: 'reply-asker', id: 'q1', outcome },
    ]);
  });
});

describe('turn machine: Stop', () => {
  test('Stop while the model step runs: cancels once; the cancelled step is written again and the turn ends stopped', () => {
    const r = rules();
    let { state, commands } = walk(r, start(r).state, { type: 'stop' });
    assert.deepEqual(commands, [{ type: 'details', text: 'Turn 3: stopping (Stop was pressed).' }, { type: 'cancel' }]);
    assert.deepEqual(nextStep(state, { type: 'stop' }, r).commands, [], 'asking again changes nothing');
    const partial: ChatMessage = { id: 's1', role: 'assistant', text: 'Once upon', stopped: true };
    ({ state, commands } = walk(r, state, {
      type: 'model-failed',
      reason: 'CancelledFailure',
      text: 'cancelled',
      unsaved: { messages: [user], events: [] },
      stopped: { before: [], partial },
    }));
    assert.equal(state.kind, 'idle');
    assert.equal(state.stoppedAt, state.boundary);
    assert.deepEqual(
      state.log.map((message) => message.id),
      ['u1', 's1'],
    );
    assert.deepEqual(commands, [
      { type: 'record-messages', messages: [user] },
      { type: 'record-events', events: [] },
      { type: 'record-events', events: [{ key: 'turn-stopped:u1', type: 'turn.stopped', data: { turn: 3, messageId: 's1' } }] },
      { type: 'close-turn-items', withdrawn: 'stop' },
      ...END.slice(1).map((type) => ({ type })),
    ]);
  });

  test("a step stopped by Stop's notice before the Stop came: the turn waits for it (a timer), then ends stopped as it asked", () => {
    const r = rules();
    const partial: ChatMessage = { id: 's1', role: 'assistant', text: 'Once', stopped: true };
    const interrupted: TurnEvent = {
      type: 'model-interrupted',
      unsaved: { messages: [user], events: [] },
      stopped: { before: [], partial },
    };
    const waiting = walk(r, start(r).state, interrupted);
    assert.deepEqual(waiting.commands, [{ type: 'await-stop', timeoutMs: STOP_ARRIVAL_MS }]);
    // the Stop comes: the turn stops as the Stop's, then its wait ends
    const arrived = walk(r, waiting.state, { type: 'stop' }, { type: 'stop-awaited' });
    assert.deepEqual(types(arrived.commands).slice(0, 2), ['details', 'cancel']);
    assert.equal(arrived.state.kind, 'idle');
    assert.equal(arrived.state.stoppedAt, arrived.state.boundary);
    assert.deepEqual(
      arrived.state.log.map((message) => message.id),
      ['u1', 's1'],
    );
    // it never comes: the turn stops itself all the same, with the same commands
    const alone = walk(r, waiting.state, { type: 'stop-awaited' });
    assert.deepEqual(alone.commands, arrived.commands);
    assert.deepEqual(alone.state, arrived.state);
    // the Stop was already there: no wait
    const already = walk(r, walk(r, start(r).state, { type: 'stop' }).state, interrupted);
    assert.ok(!types(already.commands).includes('await-stop'));
    assert.equal(already.state.kind, 'idle');
  });

  test('a step that answered just before Stop reached it: counted, and its calls answered as not run', () => {
    const r = rules();
    const stopping = walk(r, start(r).state, { type: 'stop' }).state;
    const { state, commands } = walk(r, stopping, answered(reply('r1', [call('c1', 'lookup', { user: 'a' })])));
    assert.equal(state.kind, 'idle');
    assert.equal(state.counters.usage.calls, 4);
    assert.deepEqual(toolResult(state, 'c1'), { status: 'stopped', error: 'Not run: the user pressed Stop.' });
    assert.deepEqual(recorded(commands), ['c1']);
  });

  test('Stop while awaiting approval: the withdrawn item ends the turn, the call answered as not run', () => {
    const r = rules();
    let { state } = walk(
      r,
      start(r).state,
      answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' }), call('c2', 'lookup', { user: 'a' })])),
    );
    ({ state } = walk(r, state, { type: 'stop' }));
    assert.equal(state.kind, 'awaiting-approval', 'the wait reports the withdrawal itself');
    const { state: end, commands } = walk(r, state, { type: 'approval-decided', outcome: decided('reject', { withdrawn: true }) });
    assert.equal(end.kind, 'idle');
    assert.equal(end.stoppedAt, end.boundary);
    assert.deepEqual(recorded(commands), ['c1', 'c2'], 'both calls of the reply are answered');
    assert.equal(toolResult(end, 'c2').status, 'stopped');
  });

  test('an approval that came just before Stop: the tool is asked for (its cancelled scope refuses it) and the turn ends stopped', () => {
    const r = rules();
    let { state } = walk(r, start(r).state, answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })])));
    ({ state } = walk(r, state, { type: 'stop' }));
    let commands: TurnCommand[];
    ({ state, commands } = walk(r, state, { type: 'approval-decided', outcome: decided('approve') }));
    assert.equal(commands.at(-1)!.type, 'run-tool');
    ({ state } = walk(r, state, { type: 'tool-failed', text: 'cancelled', reason: 'Error' }));
    assert.equal(state.kind, 'idle');
    assert.equal(toolResult(state, 'c1').status, 'stopped');
  });

  test('a rejection that came just before Stop is kept, and the turn ends stopped instead of asking the model', () => {
    const r = rules();
    let { state } = walk(r, start(r).state, answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })])), { type: 'stop' });
    let commands: TurnCommand[];
    ({ state, commands } = walk(r, state, { type: 'approval-decided', outcome: decided('reject', { reason: 'no' }) }));
    assert.equal(state.kind, 'idle');
    assert.equal(toolResult(state, 'c1').status, 'rejected');
    assert.ok(!types(commands).includes('call-model'));
  });

  test('Stop while a child workflow runs: the turn stops waiting, and the call says the child goes on by itself', () => {
    const r = rules();
    const { state } = walk(
      r,
      start(r).state,
      answered(reply('r1', [call('c1', 'save')])),
      { type: 'stop' },
      { type: 'tool-failed', text: 'stopped', reason: 'Error' },
    );
    assert.equal(state.kind, 'idle');
    assert.match(toolResult(state, 'c1').error!, /workflow of its own/);
  });

  test('Stop while an MCP server works on a call: the call may have completed there, and says so', () => {
    const r = rules();
    const { state } = walk(
      r,
      start(r).state,
      answered(reply('r1', [call('c1', 'remote')])),
      { type: 'stop' },
      { type: 'tool-failed', text: 'cancelled', reason: 'Error' },
    );
    assert.deepEqual(toolResult(state, 'c1'), { status: 'stopped', error: SERVER_CALL_STOPPED });
  });

  test('a message while a stopped turn was parked is kept in the transcript', () => {
    const r = rules();
    const said: ChatMessage = { id: 'u2', role: 'user', text: 'hm' };
    const { commands } = walk(
      r,
      start(r).state,
      answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })])),
      { type: 'message', message: said },
      { type: 'stop' },
      { type: 'approval-decided', outcome: decided('reject', { withdrawn: true }) },
    );
    assert.deepEqual(recorded(commands).slice(-1), ['u2']);
  });

  test("a branch move ends the parked turn in its own words: not Stop's, its calls and items say the conversation moved", () => {
    const r = rules();
    let { state } = walk(
      r,
      start(r).state,
      answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' }), call('c2', 'lookup', { user: 'a' })])),
    );
    let commands: TurnCommand[];
    ({ state, commands } = walk(r, state, { type: 'branch-left' }));
    assert.deepEqual(commands, [
      { type: 'details', text: 'Turn 3: stopping (the conversation moved to another branch).' },
      { type: 'cancel' },
    ]);
    assert.deepEqual(nextStep(state, { type: 'stop' }, r).commands, [], 'a Stop after it changes nothing');
    ({ state, commands } = walk(r, state, { type: 'approval-decided', outcome: decided('reject', { withdrawn: true }) }));
    assert.equal(state.kind, 'idle');
    assert.equal(state.stoppedAt, state.boundary);
    assert.deepEqual(toolResult(state, 'c1'), { status: 'stopped', error: 'Not run: the conversation moved to another branch.' });
    assert.deepEqual(toolResult(state, 'c2'), { status: 'stopped', error: 'Not run: the conversation moved to another branch.' });
    const stoppedEvent = commands.find((command) => command.type === 'record-events');
    assert.deepEqual(stoppedEvent, {
      type: 'record-events',
      events: [{ key: 'turn-stopped:u1', type: 'turn.stopped', data: { turn: 3, reason: 'branch' } }],
    });
    assert.deepEqual(
      commands.find((command) => command.type === 'close-turn-items'),
      { type: 'close-turn-items', withdrawn: 'branch' },
    );
  });

  test('a branch move while a child workflow runs: the call says the child goes on, and why the turn left it', () => {
    const r = rules();
    const { state } = walk(
      r,
      start(r).state,
      answered(reply('r1', [call('c1', 'save')])),
      { type: 'branch-left' },
      { type: 'tool-failed', text: 'stopped', reason: 'Error' },
    );
    assert.match(toolResult(state, 'c1').error!, /^The conversation moved to another branch while this ran as a workflow of its own/);
  });

  test('Stop with no turn running, and a failure then, change nothing', () => {
    const r = rules();
    const idle = idleState({ turns: 0, usage: { ...tokens, calls: 0 }, budgetRaises: 0 });
    assert.deepEqual(nextStep(idle, { type: 'stop' }, r), { state: idle, commands: [] });
    assert.deepEqual(nextStep(idle, { type: 'failed', reason: 'x', text: 'x' }, r), { state: idle, commands: [] });
  });
});

describe('turn machine: MCP questions and failures', () => {
  test("an MCP server's question parks the turn while the call runs; its timeout leaves the call running", () => {
    const r = rules();
    const running = walk(r, start(r).state, answered(reply('r1', [call('c1', 'remote')]))).state;
    assert.equal(running.kind === 'running-tool' && running.runner, 'mcp');
    const question = { ...approvalItem('q1'), kind: 'question', decisions: ['accept' as const, 'decline' as const, 'cancel' as const] };
    const open = walk(r, running, { type: 'asked', item: question, deadlineMs: 30_000, onTimeout: 'cancel' });
    assert.deepEqual(open.commands, [{ type: 'open-item', item: question, deadlineMs: 30_000, onTimeout: 'cancel' }]);
    const asked = walk(r, open.state, {
      ...opened('q1', false),
      decisions: question.decisions,
      onTimeout: 'cancel',
      deadlineMs: 30_000,
    }).state;
    assert.equal(asked.kind, 'running-tool');
    assert.equal(asked.boundary, running.boundary + 1);
    assert.equal(statusOf(asked), 'waiting', 'a question of the call it runs: the turn waits for a person');
    // The question's timeout goes to the call (its activity polls the answer): the turn hears only of the call's result.
    const { state } = walk(r, asked, { type: 'tool-finished', result: { error: 'the user did not answer in time' } });
    assert.equal(toolResult(state, 'c1').error, 'the user did not answer in time');
    assert.equal(state.kind, 'calling-model');
  });

  test('bookkeeping that fails fails the turn: logged, said (not written: the write is what failed), the turn ends', () => {
    const r = rules();
    const parkedTurn = walk(r, start(r).state, answered(reply('r1', [call('c1', 'cancel_order', { orderId: '7' })]))).state;
    let { state, commands } = walk(r, parkedTurn, { type: 'failed', reason: 'Error: database down', text: 'database down' });
    assert.equal(state.kind, 'failing');
    assert.deepEqual(commands.at(-1), { type: 'say', text: 'The turn failed (database down). Please try again.', record: false });
    ({ state, commands } = walk(r, state, { type: 'said', message: reply('m1') }));
    assert.equal(state.kind, 'idle');
    assert.equal(state.stoppedAt, -1);
    assert.deepEqual(types(commands), END);
  });

  test('a failure while stopping ends the turn as stopped', () => {
    const r = rules();
    const { state } = walk(r, start(r).state, { type: 'stop' }, { type: 'failed', reason: 'x', text: 'x' });
    assert.equal(state.kind, 'idle');
    assert.equal(state.stoppedAt, state.boundary);
  });
});

describe('turn machine: budgets', () => {
  const over = { scope: 'conversation' as const, spent: 6000, limit: 5000 };
  const paused = (r = rules()) =>
    walk(r, start(r).state, { type: 'over-budget', over, before: [reply('r1', [call('r1.1', 'lookup', { user: 'a' })])], usage: tokens });

  test('over budget the turn pauses on a budget item; what the step did before counts', () => {
    const { state, commands } = paused();
    assert.equal(state.kind, 'budget-paused');
    assert.deepEqual(commands.at(-1), { type: 'park-budget', over, deadlineMs: 60_000 });
    assert.equal(state.counters.usage.calls, 4);
    assert.equal(state.kind === 'budget-paused' && state.turn.step, 2);
  });

  test('approve raises the budget and asks the model again, telling it so', () => {
    const r = rules();
    const { state, commands } = walk(r, paused(r).state, { type: 'budget-decided', outcome: decided('approve') });
    assert.equal(state.counters.budgetRaises, 1);
    assert.deepEqual(commands.at(-1), {
      type: 'call-model',
      step: 2,
      summary: 'model: turn 3, step 2 (runs tools that need no person, then asks again)',
      extraSteps: 2,
      budget: { raises: 1, approvedThisTurn: true },
    });
  });

  test('reject or the deadline ends the turn in words; a refusing message is written before them', () => {
    const r = rules();
    const said: ChatMessage = { id: 'u2', role: 'user', text: 'stop spending' };
    const rejected = walk(
      r,
      paused(r).state,
      { type: 'message', message: said },
      {
        type: 'budget-decided',
        outcome: decided('reject', { reason: 'stop spending', supersededBy: 'u2' }),
      },
    );
    assert.equal(rejected.state.kind, 'finishing');
    assert.deepEqual(types(rejected.last), ['record-messages', 'say']);
    assert.match((rejected.last[1] as { text: string }).text, /the budget was not raised \(stop spending\)/);
    const late = walk(r, paused(r).state, { type: 'budget-decided', outcome: decided('reject', { timedOut: true }) });
    assert.match((late.last[0] as { text: string }).text, /nobody raised it before the deadline/);
  });

  test('Stop while paused on a budget ends the turn stopped', () => {
    const r = rules();
    const { state } = walk(
      r,
      paused(r).state,
      { type: 'stop' },
      { type: 'budget-decided', outcome: decided('reject', { withdrawn: true }) },
    );
    assert.equal(state.kind, 'idle');
    assert.equal(state.stoppedAt, state.boundary);
  });

  test('the model step hears of budget approvals only when there were some', () => {
    assert.equal(allowance(0, false), undefined);
    assert.deepEqual(allowance(2, false), { raises: 2 });
    assert.deepEqual(allowance(0, true), { raises: 0, approvedThisTurn: true });
  });
});
