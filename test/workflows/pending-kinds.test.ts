// The pending kinds table: how a chat message answers an item, and what a decision must name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PendingItem } from '../../src/shared/messages.ts';
import { chosenOption, findOption } from '../../src/shared/pending-kinds.ts';
import { refusalMessage } from '../../src/shared/refusal.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';

const confirmation: PendingItem = {
  id: 'p1',
  kind: 'confirmation',
  tool: 'recommend_breweries',
  callId: 'c1',
  args: {},
  decisions: ['yes', 'no'],
  options: [
    { id: 'b1', name: 'Stone Brewing', city: 'Escondido', state: 'California' },
    { id: 'b2', name: 'Stone Brewing Tap Room', city: 'San Diego', state: 'California' },
    { id: 'b3', name: 'Ballast Point', city: 'San Diego', state: 'California' },
  ],
};
const catalog = builtInCatalog();
const kindOf = (name: string) => {
  const spec = catalog.pendingKind(name);
  assert.ok(spec, `the catalog knows the ${name} kind`);
  return spec;
};
const [kind, approval, patchset] = [kindOf('confirmation'), kindOf('approval'), kindOf('patchset')];

test('a confirmation is answered by a message naming an option, the longest name first', () => {
  assert.deepEqual(kind.fromMessage(confirmation, 'yes, Stone Brewing Tap Room please'), {
    pendingId: 'p1',
    decision: 'yes',
    choice: 'b2',
  });
  assert.deepEqual(kind.fromMessage(confirmation, 'Ballast point!'), { pendingId: 'p1', decision: 'yes', choice: 'b3' });
  assert.deepEqual(kind.fromMessage(confirmation, 'yes'), { pendingId: 'p1', decision: 'yes', choice: 'b1' });
});

test('"no", and anything not understood, is a no that keeps the words as its reason', () => {
  assert.deepEqual(kind.fromMessage(confirmation, 'no, not Stone Brewing'), {
    pendingId: 'p1',
    decision: 'no',
    reason: 'no, not Stone Brewing',
  });
  assert.equal(kind.fromMessage(confirmation, 'what about pizza')?.decision, 'no');
});

test('a yes must name one of the options, by id or name; a lone option needs no name', () => {
  assert.equal(kind.check!(confirmation, { pendingId: 'p1', decision: 'yes', choice: 'b3' }), undefined);
  assert.equal(kind.check!(confirmation, { pendingId: 'p1', decision: 'yes', choice: 'ballast point' }), undefined);
  assert.match(
    refusalMessage(kind.check!(confirmation, { pendingId: 'p1', decision: 'yes', choice: 'Nowhere Brewing' })!),
    /must name one of the options/,
  );
  assert.match(refusalMessage(kind.check!(confirmation, { pendingId: 'p1', decision: 'yes' })!), /must name one of the options/);
  assert.equal(kind.check!(confirmation, { pendingId: 'p1', decision: 'no' }), undefined);
  const lone = { ...confirmation, options: confirmation.options!.slice(0, 1) };
  assert.equal(kind.check!(lone, { pendingId: 'p1', decision: 'yes' }), undefined);
  assert.equal(chosenOption(lone, { pendingId: 'p1', decision: 'yes' })?.id, 'b1');
  assert.equal(chosenOption(confirmation, { pendingId: 'p1', decision: 'yes', choice: 'Stone Brewing' })?.id, 'b1');
});

test('an approval answered by a message is a refusal with the message as reason; a patchset is not answered by one', () => {
  const item: PendingItem = {
    id: 'a1',
    kind: 'approval',
    tool: 'cancel_order',
    callId: 'c',
    args: {},
    decisions: ['approve', 'reject', 'edit'],
  };
  assert.deepEqual(approval.fromMessage(item, 'wait'), { pendingId: 'a1', decision: 'reject', reason: 'wait' });
  assert.equal(approval.messageIsAnswer, false);
  assert.equal(patchset.fromMessage({ ...item, kind: 'patchset' }, 'yes'), undefined);
  assert.equal(patchset.scope, 'conversation');
});

test('findOption matches whole words only', () => {
  assert.equal(findOption(confirmation.options!, 'stoned'), undefined);
});
