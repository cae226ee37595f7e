// Which row shows a turn's versions (web/src/versions.ts): a regenerated lookup's versions begin at a step that
// only asked for tools; they show on the turn's answer, and stay on the step only when the turn has no answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConversationView } from '../../web/src/types.ts';
import { versionRows } from '../../web/src/versions.ts';

type Row = ConversationView['messages'][number];
const two = { index: 1, count: 2, ids: ['a1', 'a2'] };
const user = (id: string, siblings?: Row['siblings']): Row => ({
  id,
  role: 'user',
  text: 'status of order 24601',
  ...(siblings ? { siblings } : {}),
});
const step = (id: string, siblings?: Row['siblings']): Row => ({
  id,
  role: 'assistant',
  text: '',
  toolCalls: [{ id: `${id}.1`, name: 'get_order', args: {} }],
  ...(siblings ? { siblings } : {}),
});
const tool = (id: string): Row => ({ id, role: 'tool', text: 'done', callId: id, tool: 'get_order', result: {} });
const answer = (id: string, siblings?: Row['siblings']): Row => ({
  id,
  role: 'assistant',
  text: 'Shipped.',
  ...(siblings ? { siblings } : {}),
});

test("a wordless step's versions show on the turn's answer", () => {
  const rows = versionRows([user('u1'), step('a2', two), tool('t2'), answer('r2')]);
  assert.deepEqual([...rows], [['r2', two]]);
});

test('a turn without an answer (it waits on an approval) keeps them on the step', () => {
  const rows = versionRows([user('u1'), step('a2', two), user('u2'), answer('r3')]);
  assert.deepEqual([...rows], [['a2', two]]);
  assert.deepEqual([...versionRows([user('u1'), step('a2', two), tool('t2')])], [['a2', two]]);
});

test("a user message's versions and an answer's own stay where they are", () => {
  const edited = { index: 0, count: 3, ids: ['u1', 'u9', 'u8'] };
  const rows = versionRows([user('u1', edited), answer('r1', two)]);
  assert.deepEqual(
    [...rows],
    [
      ['u1', edited],
      ['r1', two],
    ],
  );
});
