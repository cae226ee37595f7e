// The parts chatSession is composed of, without a Temporal server: the event log, the pending items, a
// stateful agent's state and what continue-as-new carries.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { type AgentKernel, KernelRefusal } from '../src/shared/agent-kernel.ts';
import type { ChatMessage, NewEvent, PendingItem } from '../src/shared/messages.ts';
import { AgentState } from '../src/workflows/agent-state.ts';
import { EventLog, type UnsavedBatch } from '../src/workflows/event-log.ts';
import { CLOSED_CARRIED, handOn, mayContinueAsNew, takeOver } from '../src/workflows/history.ts';
import { PendingItems } from '../src/workflows/pending-items.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function counter(prefix: string) {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/** An event log whose writes are kept, and pending items writing to it. */
function books(options: { carriedOpen?: PendingItem[]; carriedClosed?: [string, 'decided' | 'expired' | 'superseded'][]; now?: number } = {}) {
  const written: UnsavedBatch[] = [];
  const waiting: boolean[] = [];
  const events = new EventLog(async (batch) => void written.push(batch));
  const pending = new PendingItems({
    record: (event) => events.event(event),
    setWaiting: (value) => void waiting.push(value),
    argsOf: (tool) => (tool === 'cancel_order' ? z.object({ orderId: z.string() }) : undefined),
    carriedOpen: options.carriedOpen,
    carriedClosed: options.carriedClosed,
    now: () => options.now ?? NOW,
  });
  return { written, waiting, events, pending };
}

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
const patchset = (id: string): PendingItem => ({ id, kind: 'patchset', tool: 'patch', callId: `call-${id}`, args: {}, decisions: ['accept', 'reject'] });

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
    assert.deepEqual(refusal(() => pending.check({ pendingId: 'nope', decision: 'approve' })), {
      type: 'UnknownPending',
      message: 'No pending item nope in this conversation.',
    });
    assert.match(refusal(() => pending.check({ pendingId: 'x'.repeat(100), decision: 'approve' })).message, /^No pending item x{80}… in/);
    assert.deepEqual(refusal(() => pending.check({ pendingId: 'old', decision: 'approve' })), {
      type: 'NotPending',
      message: 'Pending item old is not pending any more (expired).',
    });
    assert.match(refusal(() => pending.check({ pendingId: 'late', decision: 'approve' })).message, /\(expired\)/);
    assert.deepEqual(refusal(() => pending.check({ pendingId: 'p1', decision: 'yes' })), {
      type: 'DecisionMismatch',
      message: '"yes" does not fit a approval; allowed: approve, reject, edit.',
    });
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'edit' })).message, /needs "args"/);
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'edit', args: { orderId: 1 } })).message, /do not fit cancel_order: orderId/);
    assert.deepEqual(pending.check({ pendingId: 'p1', decision: 'edit', args: { orderId: '47652' } }), {
      pendingId: 'p1',
      decision: 'edit',
      args: { orderId: '47652' },
    });
  });

  test('a decided item, or one a message answered, is not pending any more and says which', () => {
    const { pending } = books();
    pending.open(approval('p1'));
    pending.open(approval('p2'));
    pending.decide(pending.check({ pendingId: 'p1', decision: 'approve' }), () => assert.fail('a turn-scoped item is left to its turn'));
    pending.answerWith({ id: 'm1', role: 'user', text: 'no, wait' });
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'approve' })).message, /\(decided\)/);
    assert.match(refusal(() => pending.check({ pendingId: 'p2', decision: 'approve' })).message, /answered by a chat message sent just before/);
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
    assert.deepEqual(pending.settle(a, true, 'reject'), {
      decision: { pendingId: 'a1', decision: 'reject', reason: 'yes, Stone Brewing' },
      timedOut: false,
      supersededBy: 'm1',
    });
    assert.equal(pending.settle(c, true, 'no').decision.choice, 'b1');
    assert.deepEqual(
      events.drain().events.map((event) => [event.key, event.data.closedAs, event.data.supersededBy]),
      [
        ['pending-closed:a1', 'superseded', 'm1'],
        ['pending-closed:c1', 'decided', 'm1'],
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
    assert.deepEqual(pending.settle(entry, false, 'reject'), {
      decision: { pendingId: 'p1', decision: 'reject', reason: 'No decision before the deadline.' },
      timedOut: true,
      supersededBy: undefined,
    });
    const closed = events.drain().events[1]!;
    assert.equal(closed.data.closedAs, 'expired');
    assert.equal(closed.data.timedOut, true);
    assert.match(refusal(() => pending.check({ pendingId: 'p1', decision: 'approve' })).message, /\(expired\)/);
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
      return { state: { count: decision.decision === 'accept' ? state.count * 2 : 0 }, events: [{ key: `d:${item.id}`, type: 'patchset.decided', data: {} }] };
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

  function agentBooks() {
    const b = books({ carriedOpen: [patchset('ps-old')] });
    const errors: string[] = [];
    const agent = new AgentState({
      kernel,
      agent: 'tally',
      state: { count: 1 },
      pending: b.pending,
      events: b.events,
      newId: counter('id-'),
      now: () => NOW,
      logError: (message) => void errors.push(message),
    });
    return { ...b, agent, errors };
  }

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
    assert.deepEqual(refusal(() => agent.decide({ pendingId: 'ps-old', decision: 'accept', reason: 'refuse' })), {
      type: 'Conflict',
      message: 'not now',
    });
    assert.equal(refusal(() => agent.decide({ pendingId: 'ps-old', decision: 'accept', reason: 'bug' })).message, 'The agent could not apply that decision to its state.');
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
    assert.deepEqual(refusal(() => agent.checkAction('reset', { to: -1 })), { type: 'NotFound', message: 'no such count' });
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
    });
    const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3, calls: 4 };
    const carried = handOn({ turns: 3, usage, rejectedSignals: 1, closed: [['p1', 'decided']], agent: { state: undefined, openItems: [] } });
    const next = takeOver({ carried, init: { a: 1 } }, kernel);
    assert.equal(next.turns, 3);
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
});

