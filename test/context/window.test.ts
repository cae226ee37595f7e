// The window a model step sends (src/context/window.ts): within the budget, calls kept with their results, old
// results as stubs recall reads back, the current turn never left out, a message too large on its own cut.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildWindow, messageTokens, withSummary } from '../../src/context/window.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';

const big = (kb: number) => ({ rows: 'x'.repeat(kb * 1024) });

/** A turn: the person's words, one reply calling `calls` tools with results of `kb` KB each, the answer. */
function turn(n: number, calls = 1, kb = 4): ChatMessage[] {
  const toolCalls = Array.from({ length: calls }, (_, i) => ({ id: `t${n}.${i}`, name: 'lookup', args: {} }));
  return [
    { id: `u${n}`, role: 'user', text: `question ${n}` },
    { id: `a${n}`, role: 'assistant', text: '', toolCalls },
    ...toolCalls.map((call): ChatMessage => ({
      id: call.id,
      role: 'tool',
      text: 'lookup done',
      callId: call.id,
      tool: 'lookup',
      args: {},
      result: big(kb),
    })),
    { id: `r${n}`, role: 'assistant', text: `answer ${n}` },
  ];
}

const paired = (messages: ChatMessage[]) => {
  const open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) open.add(call.id);
    if (message.role === 'tool') assert.ok(open.delete(message.callId!), `result ${message.id} follows its call`);
  }
};

test('a short conversation is sent whole, and no fold is asked for', () => {
  const messages = [...turn(1, 1, 1), ...turn(2, 1, 1)];
  const window = buildWindow({ messages, fixedTokens: 500, budget: 100_000 });
  assert.deepEqual(window.messages, messages);
  assert.equal(window.compactThrough, undefined);
  assert.deepEqual(window.elided, []);
});

test('tool results older than the last two turns become stubs with their id', () => {
  const messages = [...turn(1), ...turn(2), ...turn(3)];
  const window = buildWindow({ messages, fixedTokens: 500, budget: 100_000 });
  assert.deepEqual(window.elided, ['t1.0']);
  const stubbed = window.messages.find((message) => message.id === 't1.0')!;
  assert.deepEqual(stubbed.result, {
    elided: true,
    id: 't1.0',
    bytes: JSON.stringify(big(4)).length,
    note: 'call recall with this id to read it',
  });
  assert.deepEqual(window.messages.find((message) => message.id === 't3.0')!.result, big(4));
});

test('past the budget the oldest turns are left out whole, the window stays within it, and a fold is asked for before the current turn', () => {
  const messages = Array.from({ length: 80 }, (_, n) => turn(n + 1, 2, 2)).flat();
  const budget = 6_000;
  const window = buildWindow({ messages, fixedTokens: 800, budget });
  assert.ok(window.tokens <= budget, `${window.tokens} <= ${budget}`);
  assert.ok(window.dropped > 0);
  assert.equal(window.messages[0]!.role, 'user', 'a window begins at a turn');
  paired(window.messages);
  assert.equal(window.messages.at(-1)!.id, 'r80');
  assert.ok(window.compactThrough);
  const folded = messages.findIndex((message) => message.id === window.compactThrough);
  assert.equal(messages[folded + 1]!.role, 'user', 'a fold ends before a turn');
  assert.ok(folded < messages.findIndex((message) => message.id === 'u80'), 'the current turn is never folded');
});

test('one turn of twenty 120 KB results in a small window: newer results become stubs too, the newest are cut to fit, the pairs hold', () => {
  const messages = turn(1, 20, 120).slice(0, -1); // the model is answering the results now
  const budget = 16_000;
  const window = buildWindow({ messages, fixedTokens: 1_000, budget });
  assert.ok(window.tokens <= budget, `${window.tokens} <= ${budget}`);
  assert.equal(window.messages.length, messages.length, 'nothing of the current turn is left out');
  paired(window.messages);
  assert.ok(window.cut.length > 0);
  const cut = window.messages.find((message) => message.id === window.cut[0])!.result as { cut: boolean; note: string; id: string };
  assert.equal(cut.cut, true);
  assert.equal(cut.id, window.cut[0]);
  assert.match(cut.note, /recall/);
});

test('a single message too large for the window on its own is cut with a note saying so', () => {
  const messages: ChatMessage[] = [{ id: 'u1', role: 'user', text: 'word '.repeat(50_000) }];
  const window = buildWindow({ messages, fixedTokens: 500, budget: 4_000 });
  assert.ok(window.tokens <= 4_000);
  assert.deepEqual(window.cut, ['u1']);
  assert.match(window.messages[0]!.text, /This message was cut: it is 250000 bytes/);
});

test('a read cut at its row limit drops leading results without their call, and asks for a fold', () => {
  const messages = turn(1).slice(2).concat(turn(2), turn(3));
  const window = buildWindow({ messages, fixedTokens: 500, budget: 100_000, readCut: true });
  assert.equal(window.messages[0]!.role, 'assistant');
  paired(window.messages);
  assert.equal(window.compactThrough, 'r1', 'all but the turns that fit the fold share');
});

test('the summary goes beside the system prompt and counts toward the window', () => {
  const summary = { text: 'The person likes stouts.', throughMessageId: 'r1', version: 1, tokens: 6 };
  const messages = turn(2, 1, 1);
  const window = buildWindow({ messages, summary, fixedTokens: 500, budget: 100_000 });
  const without = buildWindow({ messages, fixedTokens: 500, budget: 100_000 });
  assert.ok(window.tokens > without.tokens);
  assert.match(
    withSummary('You are helpful.', summary),
    /^You are helpful\.\n\n## Earlier in this conversation[^\n]*\nThe person likes stouts\.$/,
  );
  assert.equal(withSummary('You are helpful.', undefined), 'You are helpful.');
  assert.ok(messageTokens(messages[0]!) > 0);
});
