// The parts chatSession is composed of, without a Temporal server: the event log, the pending items, a
// stateful agent's state, what continue-as-new carries, and the turn loop driven through fake ports.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { ModelStepResult } from '../../src/activities/runtime-types.ts';
import { type AgentKernel, KernelRefusal } from '../../src/shared/agent-kernel.ts';
import type { ChatMessage, NewEvent, PendingItem, ToolCall, TurnResult } from '../../src/shared/messages.ts';
import { AUTO, NEEDS_APPROVAL, type ToolSpec } from '../../src/shared/tool-spec.ts';
import { AgentState } from '../../src/workflows/agent-state.ts';
import { EventLog, type UnsavedBatch } from '../../src/workflows/event-log.ts';
import { CLOSED_CARRIED, handOn, mayContinueAsNew, takeOver } from '../../src/workflows/history.ts';
import { type OpenItem, PendingItems, itemForChild } from '../../src/workflows/pending-items.ts';
import { type Condition, type ModelRequest, TurnLoop, orList } from '../../src/workflows/turn-loop.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

/** What answered an item, as the turn machine hears it (a decision, or the message that answered it instead). */
const answerOf = ({ decision, supersededBy }: OpenItem) => ({
  decision: decision!,
  timedOut: false,
  ...(supersededBy ? { supersededBy } : {}),
});

function counter(prefix: string) {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/** An event log whose writes are kept, and pending items writing to it. */
function books(
  options: { carriedOpen?: PendingItem[]; carriedClosed?: [string, 'decided' | 'expired' | 'superseded'][]; now?: number } = {},
) {
  const written: UnsavedBatch[] = [];
  const waiting: boolean[] = [];
  const events = new EventLog(async (batch) => void written.push(batch));
  const pending = new PendingItems({
    record: (event) => events.event(event),
    setWaiting: (value) => void waiting.push(value),
    toolOf: (tool) =>
      tool === 'cancel_order'
        ? { args: z.object({ orderId: z.string() }), policy: NEEDS_APPROVAL }
        : tool === 'refund'
          ? { args: z.object({ orderId: z.string(), amount: z.number(), note: z.string().optional() }), policy: REFUND_POLICY }
          : undefined,
    kindOf: (kind) => builtInCatalog().pendingKind(kind),
    carriedOpen: options.carriedOpen,
    carriedClosed: options.carriedClosed,
    now: () => options.now ?? NOW,
  });
  return { written, waiting, events, pending };
}

/** a refund asks a person above 100, and an edit may change its amount and note, never its order */
const REFUND_POLICY = {
  ...NEEDS_APPROVAL,
  approval: (args: { amount?: unknown }) => Number(args.amount) > 100,
  editable: ['amount', 'note'],
};

const approval = (id: string, extra: Partial<PendingItem> = {}): PendingItem => ({
  id,
  kind: 'approval',
  tool: 'cancel_order',
  callId: `call-${id}`,
  args: { orderId: '24601' },
  decisions: ['approve', 'reject', 'edit'],
  expiresAt: new Date(NOW + 60_000).toISOString(),
  ...extra,
});
const patchset = (id: string): PendingItem => ({
  id,
  kind: 'patchset',
  tool: 'patch',
  callId: `call-${id}`,
  args: {},
  decisions: ['accept', 'reject'],
});

function refusal(fn: () => unknown): { type: string | undefined; message: string } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ApplicationFailure, `an ApplicationFailure, not ${String(error)}`);
    assert.equal(error.nonRetryable, true);
    return { type: error.type ?? undefined, message: error.message };
  }
  assert.fail('expected a refusal');
}

describe('event log', () => {
  test('flush writes nothing, and schedules no write, when nothing is unsaved', async () => {
    const { events, written } = books();
    assert.equal(events.hasUnsaved(), false);
    await events.flush();
    assert.deepEqual(written, []);
  });

  test('messages and events wait for the next write; drain hands them over once', async () => {
    const { events, written } = books();
    const message: ChatMessage = { id: 'm1', role: 'user', text: 'hi' };
    const event: NewEvent = { key: 'k1', type: 'progress', data: {} };
    events.message(message);
    events.event(event);
    assert.deepEqual(events.drain(), { messages: [message], events: [event] });
    assert.equal(events.hasUnsaved(), false);
    events.message(message);
    await events.flush();
    await events.flush();
    assert.deepEqual(written, [{ messages: [message], events: [] }]);
  });

  test('a rejected signal is counted and recorded with its payload cut to 500 characters', () => {
    const log = new EventLog(async () => undefined, 2);
    log.signalRejected('signal-rejected:a', 'bad', { small: true });
    log.signalRejected('signal-rejected:b', 'worse', 'x'.repeat(600));
    assert.equal(log.rejectedSignals, 4);
    const { events } = log.drain();
    assert.deepEqual(events[0], { key: 'signal-rejected:a', type: 'signal.rejected', data: { reason: 'bad', payload: { small: true } } });
    assert.equal((events[1]!.data.payload as string).length, 501);
    assert.ok((events[1]!.data.payload as string).endsWith('…'));
  });
});

describe('pending items', () => {
  test("an item of a kind the catalog does not know is refused before anything is recorded; an agent's kind is known", () => {
    const { pending, events } = books();
    assert.throws(() => pending.open(approval('p-unknown', { kind: 'nonsense' })), /Pending kind "nonsense" is in no agent catalog/);
    assert.equal(pending.items().length, 0);
    assert.equal(events.hasUnsaved(), false);
    pending.open(approval('p-patchset', { kind: 'patchset' }));
    assert.equal(pending.items().length, 1);
  });

  test('opening records pending.opened; the waiting flag changes only when its value does', () => {
    const { pending, events, waiting } = books();
    pending.open(approval('p1'));
    pending.syncWaiting();
    pending.open(approval('p2'));
    pending.syncWaiting();
    assert.deepEqual(waiting, [true]);
    assert.deepEqual(
      events.drain().events.map((event) => event.key),
      ['pending-opened:p1', 'pending-opened:p2'],
    );
    assert.deepEqual(
      pending.items().map((item) => item.id),
      ['p1', 'p2'],
    );
  });

  test('check refuses with the type the API maps to a status', () => {
    const { pending } = books({ carriedClosed: [['old', 'expired']] });
    pending.open(approval('p1'));
    pending.open(approval('late', { expiresAt: new Date(NOW).toISOString() }));
    assert.equal(refusal(() => pending.check({ pendingId: 'p1' })).type, 'BadInput');
    assert.deepEqual(
      refusal(() => pending.check({ pendingId: 'nope', decision: 'approve' })),
      {
        type: 'UnknownPending',
        message: 'No pending item nope in this conversation.',
      },
    );
    assert.match(refusal(() => pending.check({ pendingId: 'x'.repeat(100), decision: 'approve' })).message, /^No pending item x{80}… in/);
    assert.deepEqual(
      refusal(() => pending.check({ pendingId: 'old', decision: 'approve' })),
      {
        type: 'NotPending',
        message: 'Pending item old is not pending any more (expired).',
      },
    );
    assert.match(refusal(() => pending.check({ pendingId: 'late', decision: 'approve' })).message, /\(expired\)/);
    assert.deepEqual(
      refusal(() => pending.check({ pendingId: 'p1', decision: 'yes' })),
      {
        type: 'DecisionMismatch',
        message: '"yes" does not fit a approval; allowed: approve, reject, edit.',
      },
    );
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'edit' })).message, /needs "args"/);
    assert.match(
      refusal(() => pending.check({ pendingId: 'p1', decision: 'edit', args: { orderId: 1 } })).message,
      /do not fit cancel_order: orderId/,
    );
    assert.deepEqual(pending.check({ pendingId: 'p1', decision: 'edit', args: { orderId: '47652' } }), {
      pendingId: 'p1',
      decision: 'edit',
      args: { orderId: '47652' },
    });
  });

  test('an approval is bound to the call it was asked about: an edit changes only what the policy lets it, a decision naming other arguments is refused', () => {
    const { pending } = books();
    pending.open(approval('r1', { tool: 'refund', args: { orderId: '24601', amount: 250 } }));
    assert.deepEqual(
      refusal(() => pending.check({ pendingId: 'r1', decision: 'edit', args: { orderId: '11111', amount: 250 } })),
      {
        type: 'DecisionMismatch',
        message: 'An edit of refund may change only amount, note; this one changes orderId, which the approval was not asked about.',
      },
    );
    assert.deepEqual(pending.check({ pendingId: 'r1', decision: 'edit', args: { orderId: '24601', amount: 120, note: 'half' } }), {
      pendingId: 'r1',
      decision: 'edit',
      args: { orderId: '24601', amount: 120, note: 'half' },
    });
    assert.deepEqual(
      refusal(() => pending.check({ pendingId: 'r1', decision: 'approve', args: { orderId: '24601', amount: 900 } })),
      {
        type: 'Conflict',
        message:
          'Pending item r1 asks about refund with other arguments than this decision names; nothing was decided. Read the item again, or edit the arguments.',
      },
    );
    // the arguments it was asked about, in any key order, approve it
    assert.equal(pending.check({ pendingId: 'r1', decision: 'approve', args: { amount: 250, orderId: '24601' } }).decision, 'approve');
    // a tool whose policy names no editable fields may be edited in any field, as before
    pending.open(approval('c1'));
    assert.equal(pending.check({ pendingId: 'c1', decision: 'edit', args: { orderId: '47652' } }).decision, 'edit');
  });

  test('a decided item, or one a message answered, is not pending any more and says which', () => {
    const { pending } = books();
    pending.open(approval('p1'));
    pending.open(approval('p2'));
    pending.decide(pending.check({ pendingId: 'p1', decision: 'approve' }), () => assert.fail('a turn-scoped item is left to its turn'));
    pending.answerWith({ id: 'm1', role: 'user', text: 'no, wait' });
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'approve' })).message, /\(decided\)/);
    assert.match(
      refusal(() => pending.check({ pendingId: 'p2', decision: 'approve' })).message,
      /answered by a chat message sent just before/,
    );
    assert.deepEqual(pending.items(), [], 'both are decided, though their turn has not closed them yet');
  });

  test('a conversation-scoped item closes at once, after `before`; a refusal there changes nothing', () => {
    const { pending, events, waiting } = books({ carriedOpen: [patchset('ps1')] });
    pending.syncWaiting();
    const decision = pending.check({ pendingId: 'ps1', decision: 'accept' });
    assert.throws(() =>
      pending.decide(decision, () => {
        throw new Error('refused');
      }),
    );
    assert.equal(pending.items().length, 1);
    const outcome = pending.decide(decision, (entry) => entry.item.tool);
    assert.deepEqual(outcome, { settled: true, value: 'patch' });
    assert.deepEqual(pending.items(), []);
    assert.deepEqual(waiting, [true, false]);
    assert.deepEqual(events.drain().events[0]!.data, {
      id: 'ps1',
      kind: 'patchset',
      decision: 'accept',
      reason: null,
      closedAs: 'decided',
      timedOut: false,
      supersededBy: null,
    });
    assert.deepEqual(pending.closedItems(), [['ps1', 'decided']]);
  });

  test('a message answers turn items by their kind: an approval is superseded, a confirmation decided', () => {
    const { pending, events } = books({ carriedOpen: [patchset('ps1')] });
    const a = pending.open(approval('a1'));
    const c = pending.open({
      id: 'c1',
      kind: 'confirmation',
      tool: 'recommend',
      callId: 'call-c1',
      args: {},
      decisions: ['yes', 'no'],
      options: [{ id: 'b1', name: 'Stone Brewing' }],
    });
    events.drain();
    pending.answerWith({ id: 'm1', role: 'user', text: 'yes, Stone Brewing' });
    assert.deepEqual(answerOf(a), {
      decision: { pendingId: 'a1', decision: 'reject', reason: 'yes, Stone Brewing' },
      timedOut: false,
      supersededBy: 'm1',
    });
    assert.equal(answerOf(c).decision.choice, 'b1');
    pending.settle(a, answerOf(a));
    pending.settle(c, answerOf(c));
    assert.deepEqual(
      events.drain().events.map((event) => [event.key, event.data.closedAs, event.data.supersededBy, event.data.choice]),
      [
        ['pending-closed:a1', 'superseded', 'm1', undefined],
        ['pending-closed:c1', 'decided', 'm1', 'b1'],
      ],
    );
    assert.deepEqual(
      pending.items().map((item) => item.id),
      ['ps1'],
      'a conversation-scoped item is not answered by a message',
    );
  });

  test('an item nobody decided expires with its timeout decision', () => {
    const { pending, events } = books();
    const entry = pending.open(approval('p1'));
    pending.settle(entry, {
      decision: { pendingId: 'p1', decision: 'reject', reason: 'No decision before the deadline.' },
      timedOut: true,
    });
    const closed = events.drain().events[1]!;
    assert.equal(closed.data.closedAs, 'expired');
    assert.equal(closed.data.timedOut, true);
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'approve' })).message, /\(expired\)/);
  });

  test("a child's request becomes an item with its request id and a deadline from now", () => {
    const item = itemForChild(
      {
        requestId: 'r1',
        owner: 'save-recipe-1',
        kind: 'confirmation',
        tool: 'save_recipe',
        callId: 'c1',
        args: { title: 'Soup' },
        decisions: ['yes', 'no'],
        deadlineMs: 5000,
        onTimeout: 'no',
        prompt: 'Save it?',
      },
      NOW,
    );
    assert.deepEqual(item, {
      id: 'r1',
      kind: 'confirmation',
      tool: 'save_recipe',
      callId: 'c1',
      args: { title: 'Soup' },
      decisions: ['yes', 'no'],
      expiresAt: new Date(NOW + 5000).toISOString(),
      prompt: 'Save it?',
    });
  });

  test("a turn's end closes its items as superseded and leaves conversation-scoped ones open", () => {
    const { pending, waiting } = books({ carriedOpen: [patchset('ps1')] });
    pending.open(approval('p1'));
    pending.syncWaiting();
    pending.closeTurnItems();
    assert.deepEqual(pending.closedItems(), [['p1', 'superseded']]);
    assert.deepEqual(
      pending.items().map((item) => item.id),
      ['ps1'],
    );
    assert.deepEqual(waiting, [true], 'still waiting: the patchset is open');
  });
});

describe('agent state', () => {
  interface Tally {
    count: number;
  }
  const kernel: AgentKernel<Tally> = {
    init: () => ({ count: 0 }),
    context: (state) => ({ count: state.count }),
    view: (state, open) => ({ count: state.count, open: open.length }),
    output: { schema: z.object({ add: z.number() }), text: (answer) => String(answer.add) },
    onAnswer: (state, answer, ctx) => ({
      state: { count: state.count + answer.add },
      say: [`now ${state.count + answer.add}`],
      open: { kind: 'patchset', tool: 'tally', callId: ctx.newId(), args: {}, decisions: ['accept', 'reject'], deadlineMs: 1000 },
    }),
    onDecision(state, item, decision) {
      if (decision.reason === 'refuse') throw new KernelRefusal('Conflict', 'not now');
      if (decision.reason === 'bug') throw new Error('kernel bug');
      return {
        state: { count: decision.decision === 'accept' ? state.count * 2 : 0 },
        events: [{ key: `d:${item.id}`, type: 'patchset.decided', data: {} }],
      };
    },
    actions: {
      reset: {
        args: z.object({ to: z.number() }),
        apply(state, { to }) {
          if (to < 0) throw new KernelRefusal('NotFound', 'no such count');
          return { state: { count: to }, close: [{ id: 'ps-old', reason: 'superseded' }] };
        },
      },
    },
  };

  function agentBooks(declaredEvents: Record<string, z.ZodType> = { 'patchset.decided': z.object({}) }) {
    const b = books({ carriedOpen: [patchset('ps-old')] });
    const errors: string[] = [];
    const agent = new AgentState({
      kernel,
      agent: 'tally',
      state: { count: 1 },
      pending: b.pending,
      events: b.events,
      declaredEvents,
      newId: counter('id-'),
      now: () => NOW,
      logError: (message) => void errors.push(message),
    });
    return { ...b, agent, errors };
  }

  test('an event the agent does not declare, or whose data does not fit, is logged as its bug and still written', () => {
    const undeclared = agentBooks({});
    undeclared.agent.decide({ pendingId: 'ps-old', decision: 'accept' });
    assert.deepEqual(undeclared.errors, ['A kernel wrote an event type its agent does not declare']);
    assert.ok(undeclared.events.drain().events.some((event) => event.type === 'patchset.decided'));
    const misfit = agentBooks({ 'patchset.decided': z.object({ patchSetId: z.string() }) });
    misfit.agent.decide({ pendingId: 'ps-old', decision: 'accept' });
    assert.deepEqual(misfit.errors, ["A kernel wrote an event whose data does not fit the agent's schema"]);
    const fits = agentBooks();
    fits.agent.decide({ pendingId: 'ps-old', decision: 'accept' });
    assert.deepEqual(fits.errors, []);
  });

  test("an answer's effects apply in order: state, a new item with its deadline, what it said", () => {
    const { agent, pending, events } = agentBooks();
    const said = agent.onAnswer({ add: 2 });
    assert.deepEqual(agent.state, { count: 3 });
    // One id source, in the workflow's order: the kernel's own, the new item's, then what it said.
    assert.deepEqual(said, [{ id: 'id-3', role: 'assistant', text: 'now 3' }]);
    const opened = pending.items()[1]!;
    assert.equal(opened.callId, 'id-1');
    assert.equal(opened.id, 'id-2');
    assert.equal(opened.expiresAt, new Date(NOW + 1000).toISOString());
    assert.deepEqual(events.drain().messages, said);
    assert.deepEqual(agent.view(), { count: 3, open: 2 });
    assert.deepEqual(agent.modelContext(), { count: 3 });
  });

  test('a decision on a conversation-scoped item is settled by the kernel; a refusal leaves it open', () => {
    const { agent, pending, errors } = agentBooks();
    assert.deepEqual(
      refusal(() => agent.decide({ pendingId: 'ps-old', decision: 'accept', reason: 'refuse' })),
      {
        type: 'Conflict',
        message: 'not now',
      },
    );
    assert.equal(
      refusal(() => agent.decide({ pendingId: 'ps-old', decision: 'accept', reason: 'bug' })).message,
      'The agent could not apply that decision to its state.',
    );
    assert.deepEqual(errors, ['A kernel call failed']);
    assert.equal(pending.items().length, 1);
    assert.deepEqual(agent.decide({ pendingId: 'ps-old', decision: 'accept' }), []);
    assert.deepEqual(agent.state, { count: 2 });
    assert.deepEqual(pending.closedItems(), [['ps-old', 'decided']]);
  });

  test('a turn-scoped decision is left to the turn', () => {
    const { agent, pending } = agentBooks();
    pending.open(approval('p1'));
    assert.equal(agent.decide({ pendingId: 'p1', decision: 'approve' }), undefined);
    assert.equal(pending.get('p1')?.decision?.decision, 'approve');
  });

  test('an action is checked on a dry run, then applied', () => {
    const { agent, pending } = agentBooks();
    assert.equal(refusal(() => agent.checkAction('explode', {})).type, 'NotFound');
    assert.equal(refusal(() => agent.checkAction('reset', { to: 'x' })).type, 'BadInput');
    assert.deepEqual(
      refusal(() => agent.checkAction('reset', { to: -1 })),
      { type: 'NotFound', message: 'no such count' },
    );
    agent.checkAction('reset', { to: 5 });
    assert.deepEqual(agent.state, { count: 1 }, 'the dry run changed nothing');
    agent.act('reset', { to: 5 });
    assert.deepEqual(agent.state, { count: 5 });
    assert.deepEqual(pending.closedItems(), [['ps-old', 'superseded']]);
  });
});

describe('history and continue-as-new', () => {
  test('a new conversation starts from its kernel; a continued one from what it was handed', () => {
    const kernel = { init: (init: unknown) => ({ from: init }) } as unknown as AgentKernel;
    const fresh = takeOver({ init: { a: 1 } }, kernel);
    assert.deepEqual(fresh, {
      turns: 0,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 },
      rejectedSignals: 0,
      agentState: { from: { a: 1 } },
      openItems: [],
      closed: [],
      budgetRaises: 0,
    });
    const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3, calls: 4 };
    const carried = handOn({
      turns: 3,
      usage,
      rejectedSignals: 1,
      closed: [['p1', 'decided']],
      agent: { state: undefined, openItems: [] },
      budgetRaises: 2,
    });
    const next = takeOver({ carried, init: { a: 1 } }, kernel);
    assert.equal(next.turns, 3);
    assert.equal(next.budgetRaises, 2, 'budget approvals are carried');
    assert.equal(next.agentState, undefined, 'carried state wins, even when empty');
    assert.deepEqual(next.closed, [['p1', 'decided']]);
  });

  test('only the newest closed items are handed on, and agent state only for a stateful agent', () => {
    const closed = Array.from({ length: CLOSED_CARRIED + 5 }, (_, i): [string, 'decided'] => [`p${i}`, 'decided']);
    const carried = handOn({ turns: 1, usage: takeOver({}, undefined).usage, rejectedSignals: 0, closed });
    assert.equal(carried.closed!.length, CLOSED_CARRIED);
    assert.equal(carried.closed![0]![0], 'p5');
    assert.equal('agentState' in carried, false);
    assert.equal('openItems' in carried, false);
  });

  test('a run may go only between turns, with every handler done, when suggested or at its turn limit', () => {
    const base = { turnActive: false, allHandlersFinished: () => true, suggested: () => false, turnsThisRun: 2, afterTurns: 3 };
    assert.equal(mayContinueAsNew(base), false);
    assert.equal(mayContinueAsNew({ ...base, turnsThisRun: 3 }), true);
    assert.equal(mayContinueAsNew({ ...base, suggested: () => true }), true);
    assert.equal(mayContinueAsNew({ ...base, afterTurns: 0, turnsThisRun: 50 }), false, '0: only when the server suggests');
    assert.equal(mayContinueAsNew({ ...base, turnsThisRun: 3, turnActive: true }), false);
    assert.equal(mayContinueAsNew({ ...base, turnsThisRun: 3, allHandlersFinished: () => false }), false);
  });

  test('a run pinned to an old worker version goes once a newer one is current, but never mid-turn', () => {
    const base = { turnActive: false, allHandlersFinished: () => true, suggested: () => false, turnsThisRun: 0, afterTurns: 0 };
    assert.equal(mayContinueAsNew({ ...base, upgradable: () => false }), false);
    assert.equal(mayContinueAsNew({ ...base, upgradable: () => true }), true);
    assert.equal(mayContinueAsNew({ ...base, upgradable: () => true, turnActive: true }), false, 'a parked turn finishes on its version');
    assert.equal(mayContinueAsNew({ ...base, upgradable: () => true, allHandlersFinished: () => false }), false);
  });
});

// ---- the turn loop -------------------------------------------------------------------------------

let stopped = false;
after(() => {
  stopped = true;
});

/** condition() as the SDK has it, polled; a timed wait ends false when the test lets its deadline pass. */
function fakeClock() {
  let expired = false;
  const condition = ((fn: () => boolean, timeoutMs?: number) =>
    new Promise<boolean | void>((resolve) => {
      const tick = () => {
        if (stopped) return;
        if (fn()) return resolve(timeoutMs === undefined ? undefined : true);
        if (timeoutMs !== undefined && expired) return resolve(false);
        setImmediate(tick);
      };
      tick();
    })) as Condition;
  return {
    condition,
    expire: () => {
      expired = true;
    },
  };
}

const tools: ToolSpec[] = [
  { name: 'lookup', description: '', args: z.object({ user: z.string() }), policy: AUTO },
  { name: 'cancel_order', description: '', args: z.object({ orderId: z.string() }), policy: NEEDS_APPROVAL },
];

const reply = (id: string, text: string, toolCalls?: ToolCall[]): ChatMessage => ({
  id,
  role: 'assistant',
  text,
  ...(toolCalls ? { toolCalls } : {}),
});
const usage = { model: 'fake', inputTokens: 10, outputTokens: 5, totalTokens: 15 };

function loop(script: ((request: ModelRequest, summary: string) => ModelStepResult | Promise<ModelStepResult>)[], settings = {}) {
  const b = books();
  const clock = fakeClock();
  const requests: { summary: string; request: ModelRequest }[] = [];
  const ran: { tool: string; args: unknown }[] = [];
  const details: string[] = [];
  const errors: string[] = [];
  const agent = new AgentState({
    kernel: undefined,
    agent: 'test',
    state: undefined,
    pending: b.pending,
    events: b.events,
    newId: counter('k-'),
    logError: () => undefined,
  });
  const turns = new TurnLoop(
    {
      settings: { maxSteps: 6, maxToolErrors: 2, approvalTimeoutMs: 60_000, ...settings },
      pending: b.pending,
      events: b.events,
      agent,
      tools,
      findTool: (name) => tools.find((tool) => tool.name === name),
      modelStep: async (summary, request) => {
        requests.push({ summary, request });
        const next = script.shift();
        if (!next) throw new Error('the model was not expected again');
        return next(request, summary);
      },
      runTool: async (call, args) => {
        ran.push({ tool: call.name, args });
        return { ok: true };
      },
      runChild: async () => assert.fail('no child tools here'),
      condition: clock.condition,
      details: (text) => void details.push(text),
      newId: counter('id-'),
      now: () => NOW,
      logError: (message) => void errors.push(message),
      failureText: (error) => (error instanceof Error ? error.message : String(error)),
    },
    { turns: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 } },
  );
  const say = (text: string): Promise<TurnResult> => turns.receive({ id: `u-${text}`, role: 'user', text });
  return { ...b, turns, clock, requests, ran, details, errors, say };
}

describe('turn loop', () => {
  test('orList names the choices', () => {
    assert.equal(orList(['approve', 'reject', 'edit']), 'approve, reject or edit');
    assert.equal(orList(['yes']), 'yes');
  });

  test('a turn asks the model with what is unsaved and ends when the reply calls no tool', async () => {
    const t = loop([() => ({ message: reply('r1', 'hello'), usage })]);
    const result = await t.say('hi');
    assert.deepEqual(
      result.messages.map((message) => message.id),
      ['u-hi', 'r1'],
    );
    assert.deepEqual(t.requests[0]!.request, {
      stepId: 'id-1',
      extraSteps: 5,
      messages: [{ id: 'u-hi', role: 'user', text: 'hi' }],
      events: [],
      turnStartedAt: NOW,
    });
    assert.equal(t.requests[0]!.summary, 'model: turn 1, step 1 (runs tools that need no person, then asks again)');
    assert.equal(t.turns.status(), 'idle');
    assert.equal(t.turns.turns, 1);
    assert.equal(t.turns.usage.calls, 1);
    assert.equal(t.turns.usage.totalTokens, 15);
    assert.deepEqual(t.written, [], 'nothing left to write: the model step took it all');
    assert.equal(t.details.at(-1), 'Idle after 1 turn(s): waiting for the next message.');
  });

  test('without inline tools each step is one model call and says so', async () => {
    const t = loop([() => ({ message: reply('r1', 'hello'), usage })], { inlineTools: false });
    await t.say('hi');
    assert.equal(t.requests[0]!.request.extraSteps, 0);
    assert.equal(t.requests[0]!.summary, 'model: turn 1, step 1');
  });

  test('an approval parks the turn; a decision lets it run the tool and ask again', async () => {
    const t = loop([
      () => ({ message: reply('r1', '', [{ id: 'c1', name: 'cancel_order', args: { orderId: '24601' } }]), usage }),
      (request) => {
        assert.deepEqual(request.messages, [], 'the tool message is the runTool activity’s to write');
        return { message: reply('r2', 'cancelled'), usage };
      },
    ]);
    const parked = await t.say('cancel 24601');
    assert.equal(t.turns.status(), 'waiting');
    assert.equal(t.turns.parked, true);
    const [item] = parked.pending;
    assert.equal(item!.tool, 'cancel_order');
    assert.equal(item!.expiresAt, new Date(NOW + 60_000).toISOString());
    assert.deepEqual(t.waiting, [true]);
    assert.equal(t.written.length, 1, 'the open item is written while the person thinks');
    assert.deepEqual(
      t.written[0]!.events.map((event) => event.type),
      ['pending.opened'],
    );
    assert.match(t.details.at(-1)!, /^Waiting for a human: approve, reject or edit cancel_order \{"orderId":"24601"\}/);

    const logStart = t.turns.logLength;
    // as the decide handler does: the item's books record the decision, the turn machine hears it as an event
    const decision = t.pending.check({ pendingId: item!.id, decision: 'edit', args: { orderId: '47652' } });
    t.pending.decide(decision, () => undefined);
    t.turns.decided(decision);
    assert.equal(t.turns.status(), 'running', 'decided: the turn no longer waits for a person');
    const next = await t.turns.waitForBoundary(logStart);
    assert.deepEqual(t.ran, [{ tool: 'cancel_order', args: { orderId: '47652' } }], 'the edited arguments ran');
    assert.deepEqual(
      next.messages.map((message) => message.role),
      ['tool', 'assistant'],
    );
    assert.deepEqual(next.pending, []);
    assert.deepEqual(t.waiting, [true, false]);
    assert.equal(t.turns.status(), 'idle');
  });

  test('a message while parked refuses the call, and enters the transcript after the tool result', async () => {
    const t = loop([
      () => ({ message: reply('r1', '', [{ id: 'c1', name: 'cancel_order', args: { orderId: '24601' } }]), usage }),
      (request) => {
        assert.deepEqual(
          request.messages.map((message) => message.id),
          ['c1', 'u-no, the other one'],
        );
        assert.match(request.messages[0]!.text, /failed/);
        return { message: reply('r2', 'which one?'), usage };
      },
    ]);
    const parked = await t.say('cancel 24601');
    const answered = await t.say('no, the other one');
    assert.deepEqual(t.ran, []);
    const tool = answered.messages.find((message) => message.role === 'tool')!;
    assert.deepEqual(tool.result, {
      status: 'rejected',
      error: 'Not run: the user answered with a message instead of approving: "no, the other one"',
    });
    assert.deepEqual(
      answered.messages.map((message) => message.id),
      ['u-no, the other one', 'c1', 'r2'],
    );
    assert.deepEqual(t.pending.closedItems(), [[parked.pending[0]!.id, 'superseded']]);
  });

  test('an approval nobody decides expires with its timeout decision', async () => {
    const t = loop([
      () => ({ message: reply('r1', '', [{ id: 'c1', name: 'cancel_order', args: { orderId: '24601' } }]), usage }),
      () => ({ message: reply('r2', 'not cancelled'), usage }),
    ]);
    const parked = await t.say('cancel 24601');
    const logStart = t.turns.logLength;
    t.clock.expire();
    const next = await t.turns.waitForBoundary(logStart);
    assert.deepEqual(next.messages[0]!.result, {
      status: 'rejected',
      error: 'The user rejected this call: No decision before the deadline.',
    });
    assert.deepEqual(t.pending.closedItems(), [[parked.pending[0]!.id, 'expired']]);
  });

  test('invalid calls are answered to the model, and too many stop the turn', async () => {
    const bad = (n: number): ToolCall[] => [
      { id: `x${n}`, name: 'nope', args: {} },
      { id: `y${n}`, name: 'lookup', args: { user: 1 } },
    ];
    const t = loop([() => ({ message: reply('r1', '', bad(1)), usage }), () => ({ message: reply('r2', '', bad(2)), usage })]);
    const result = await t.say('go');
    assert.deepEqual(
      result.messages.at(-1)!.text,
      'I stopped: the model made 4 invalid tool calls in this turn. Please rephrase the request.',
    );
    assert.deepEqual(result.messages[2]!.result, { error: 'Unknown tool "nope". Available tools: lookup, cancel_order.' });
    assert.match(String((result.messages[3]!.result as { error: string }).error), /^Invalid arguments for lookup: user:/);
    assert.deepEqual(
      t.written.at(-1)!.messages.map((message) => message.id),
      ['x2', 'y2', result.messages.at(-1)!.id],
      'the refusals and the stop are written with the turn’s end',
    );
  });

  test('a step counts every model call the step made, and the step limit ends the turn', async () => {
    const t = loop(
      [
        () => ({
          message: reply('r3', '', [{ id: 'l1', name: 'lookup', args: { user: 'a' } }]),
          before: [reply('r1', ''), { id: 't1', role: 'tool', text: 'lookup done' }, reply('r2', '')],
          usage,
        }),
      ],
      { maxSteps: 3 },
    );
    const result = await t.say('go');
    assert.equal(t.turns.usage.calls, 3);
    assert.deepEqual(t.ran, [{ tool: 'lookup', args: { user: 'a' } }]);
    assert.equal(
      result.messages.at(-1)!.text,
      'I stopped after 3 steps without reaching an answer. Please rephrase or narrow the request.',
    );
  });

  test('a model that fails ends the turn with a message saying so; the conversation goes on', async () => {
    const t = loop([
      () => {
        throw new Error('overloaded');
      },
      () => ({ message: reply('r2', 'back'), usage }),
    ]);
    const failed = await t.say('one');
    assert.equal(failed.messages.at(-1)!.text, 'The model could not answer (overloaded). Nothing else was done; please try again.');
    assert.deepEqual(t.errors, ['Model step failed']);
    const next = await t.say('two');
    assert.deepEqual(
      next.messages.map((message) => message.id),
      ['u-two', 'r2'],
    );
    assert.equal(t.turns.turns, 2);
  });

  test('a turn that fails while parked closes its items and says it failed', async () => {
    const t = loop([() => ({ message: reply('r1', '', [{ id: 'c1', name: 'cancel_order', args: { orderId: '24601' } }]), usage })]);
    // Bookkeeping that failed all its retries: the open item cannot be written, so the turn fails.
    t.events.flush = async () => {
      throw new Error('database down');
    };
    // The message's answer comes as the turn parks; the item's write fails after it (in a workflow, a later
    // activation: the bookkeeping is a local activity), and ends the turn.
    const parked = await t.say('cancel');
    assert.deepEqual(
      parked.pending.map((item) => item.tool),
      ['cancel_order'],
    );
    await t.turns.waitForEnd();
    assert.equal(t.turns.status(), 'idle');
    assert.equal(t.pending.closedItems()[0]![1], 'superseded', 'the item does not outlive its turn');
    assert.deepEqual(t.pending.items(), []);
    assert.equal(t.turns.state.log.at(-1)!.text, 'The turn failed (database down). Please try again.');
    assert.deepEqual(t.errors, ['Turn failed', 'Could not record the end of a turn']);
  });

  test('Stop while the model step runs ends the turn at once, stopped, and writes again what the step was handed', async () => {
    let release!: (error: unknown) => void;
    const t = loop([() => new Promise<ModelStepResult>((_, reject) => (release = reject))]);
    const turn = t.say('story');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(t.turns.stop(), true);
    assert.equal(t.turns.stop(), true, 'asking again changes nothing');
    const result = await turn;
    assert.equal(result.stopped, true);
    assert.equal(t.turns.status(), 'idle');
    assert.equal(t.turns.stop(), false, 'nothing runs now');
    // the step's own rejection comes later and changes nothing
    release(new Error('late'));
    assert.deepEqual(
      t.written.flatMap((batch) => batch.events.map((event) => event.type)),
      ['turn.stopped'],
    );
    assert.deepEqual(
      t.written.flatMap((batch) => batch.messages.map((message) => message.id)),
      ['u-story'],
      'what the step was handed is written again, keyed, in case it never started',
    );
  });

  test("a step a Stop's notice interrupted: the turn waits for the Stop, answers it stopped, and keeps what streamed", async () => {
    const partial: ChatMessage = { id: 'r1', role: 'assistant', text: 'Once upon', stopped: true };
    const t = loop([() => ({ message: reply('r1', ''), usage, interrupted: { before: [], partial } })]);
    const turn = t.say('story');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(t.turns.status(), 'running', 'the turn waits for the Stop the notice announced');
    assert.equal(t.turns.stop(), true, 'the Stop finds the turn it stopped');
    const result = await turn;
    assert.equal(result.stopped, true);
    assert.deepEqual(
      result.messages.map((message) => [message.id, message.text]),
      [
        ['u-story', 'story'],
        ['r1', 'Once upon'],
      ],
    );
    assert.equal(t.turns.status(), 'idle');
    assert.deepEqual(
      t.written.flatMap((batch) => batch.events.map((event) => event.type)),
      ['turn.stopped'],
    );
  });

  test('a notice whose Stop never comes still ends the turn stopped (the user asked)', async () => {
    const t = loop([() => ({ message: reply('r1', ''), usage, interrupted: { before: [] } })]);
    const turn = t.say('story');
    await new Promise((resolve) => setImmediate(resolve));
    t.clock.expire();
    const result = await turn;
    assert.equal(result.stopped, true);
    assert.equal(t.turns.status(), 'idle');
  });

  test('Stop while parked withdraws the item and answers the call; the next message is a normal turn', async () => {
    const t = loop([
      () => ({ message: reply('r1', '', [{ id: 'c1', name: 'cancel_order', args: { orderId: '24601' } }]), usage }),
      () => ({ message: reply('r2', 'hello'), usage }),
    ]);
    const parked = await t.say('cancel');
    assert.equal(parked.pending.length, 1);
    assert.equal(t.turns.stop(), true);
    await t.turns.waitForEnd();
    assert.equal(t.pending.closedItems()[0]![1], 'withdrawn');
    assert.deepEqual(t.ran, [], 'the tool did not run');
    const tool = t.written.flatMap((batch) => batch.messages).find((message) => message.role === 'tool')!;
    assert.equal((tool.result as { status: string }).status, 'stopped');
    const next = await t.say('hi');
    assert.equal(next.stopped, undefined);
    assert.equal(next.messages.at(-1)!.text, 'hello');
  });

  test('over budget the turn parks on a budget item; a message refuses it and is kept', async () => {
    const t = loop([
      () => ({
        message: { id: 'id-1', role: 'assistant', text: '' },
        usage: { ...usage, totalTokens: 0 },
        overBudget: { scope: 'conversation', spent: 6000, limit: 5000 },
      }),
    ]);
    const parked = await t.say('go');
    const [item] = parked.pending;
    assert.equal(item!.kind, 'budget');
    assert.deepEqual(item!.args, { scope: 'conversation', spent: 6000, limit: 5000 });
    const refused = await t.say('no, stop spending');
    assert.equal(t.turns.status(), 'idle');
    assert.match(
      refused.messages.at(-1)!.text,
      /6,000 tokens of its 5,000-token budget, and the budget was not raised \(no, stop spending\)/,
    );
    const written = t.written.flatMap((batch) => batch.messages.map((message) => message.text));
    assert.ok(written.includes('no, stop spending'), 'the refusing message is in the transcript');
    assert.equal(t.turns.budgetRaises, 0);
  });
});
