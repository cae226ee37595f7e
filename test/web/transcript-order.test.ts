// The transcript is built in event order whichever comes first on a load, the GET view's messages or the
// replayed events (issue 46, item 2): on about one load in four a decision record jumped to the end, because
// a record that opened after the GET's messages were in was appended after all of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addMessages, applyEvent, emptyTranscript, type Transcript } from '../../web/src/transcript.ts';
import type { ChatMessage, StreamEvent } from '../../web/src/types.ts';

const user = (id: string, text: string): ChatMessage => ({ id, role: 'user', text });
const assistant = (id: string, text: string, call?: string): ChatMessage => ({
  id,
  role: 'assistant',
  text,
  ...(call ? { toolCalls: [{ id: call, name: 'cancel_order', args: { order_id: '1' } }] } : {}),
});
const tool = (id: string, call: string): ChatMessage => ({ id, role: 'tool', text: '', callId: call, tool: 'cancel_order' }) as ChatMessage;

// two approvals, a child's progress, and the replies around them
const messages = [
  user('u1', 'cancel order 1'),
  assistant('a1', '', 'c1'),
  tool('t1', 'c1'),
  assistant('a2', 'Cancelled.'),
  user('u2', 'recommend'),
  assistant('a3', '', 'c2'),
  tool('t2', 'c2'),
  assistant('a4', 'Done.'),
];
const item = (id: string, callId: string) => ({ id, kind: 'approval', tool: 'cancel_order', callId, args: {}, decisions: ['approve'] });
let eventId = 0;
const event = (type: string, data: Record<string, unknown>): StreamEvent => ({ id: ++eventId, type, data }) as StreamEvent;
const events: StreamEvent[] = [
  event('message', messages[0]!),
  event('message', messages[1]!),
  event('pending.opened', item('p1', 'c1')),
  event('pending.closed', { id: 'p1', decision: 'approve', closedAs: 'decided' }),
  event('message', messages[2]!),
  event('message', messages[3]!),
  event('message', messages[4]!),
  event('message', messages[5]!),
  event('progress', { workflowId: 'w1', step: 'search', index: 1, of: 2, state: 'started' }),
  event('pending.opened', item('p2', 'c2')),
  event('progress', { workflowId: 'w1', step: 'search', index: 1, of: 2, state: 'done' }),
  event('message', messages[6]!),
  event('message', messages[7]!),
];
const EXPECTED = ['u1', 'a1', 'pending:p1', 't1', 'a2', 'u2', 'a3', 'progress:w1', 'pending:p2', 't2', 'a4'];

const replay = (t: Transcript, list: StreamEvent[]) => list.reduce(applyEvent, t);

test('the events first, then the GET view: the order of the events', () => {
  const t = addMessages(replay(emptyTranscript(), events), messages);
  assert.deepEqual(t.order, EXPECTED);
});

test('the GET view first, then the events: the same order, records in place and not at the end', () => {
  const t = replay(addMessages(emptyTranscript(), messages), events);
  assert.deepEqual(t.order, EXPECTED);
});

test('the GET view arriving halfway through the replay: the same order', () => {
  for (let cut = 0; cut <= events.length; cut++) {
    const t = replay(addMessages(replay(emptyTranscript(), events.slice(0, cut)), messages), events.slice(cut));
    assert.deepEqual(t.order, EXPECTED, `GET after ${cut} events`);
  }
});

test('an event replayed again after a reconnect (a new place in the stream) adds no second record', () => {
  const t = replay(emptyTranscript(), events);
  const again = applyEvent(t, { ...events[2]!, id: 100 } as StreamEvent);
  assert.deepEqual(again.order, EXPECTED);
});
