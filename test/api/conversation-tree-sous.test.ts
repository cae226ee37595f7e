// A stateful agent across branches (issue 45, item 3): sous keeps its state beside each answer (agent.state), and a
// branch switch or an edit resumes from the state of the new path's last answer: the recipe version at that point,
// the PatchSet the left branch waited on withdrawn. The offline model proposes the PatchSets (docs/agents/offline-model.md).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

async function ok(method: string, path: string, body?: unknown) {
  const response = await app.call(method, path, body === undefined ? {} : { body });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

test('sous resumes from the recipe version of the branch it moves to; the left branch’s PatchSet is withdrawn', async () => {
  const { id } = await ok('POST', '/v1/conversations', { agent: 'sous', title: 'tree', defaults: { hardAvoids: ['peanut'] } });
  const swap = await ok('POST', `/v1/conversations/${id}/messages`, { text: 'swap butter for olive oil' });
  await ok('POST', `/v1/conversations/${id}/decisions`, { pendingId: swap.pending[0].id, decision: 'accept' });
  const portions = await ok('POST', `/v1/conversations/${id}/messages`, { text: 'make it for 4' });
  await ok('POST', `/v1/conversations/${id}/decisions`, { pendingId: portions.pending[0].id, decision: 'accept' });
  const atFour = await ok('GET', `/v1/conversations/${id}`);
  assert.equal(atFour.recipe.version, 3);
  const asked = portions.messages[0];

  // an edit of "make it for 4": the new branch goes on from the recipe as it was before it (version 2)
  const note = await ok('POST', `/v1/conversations/${id}/messages/${asked.id}/edit`, { text: 'add a note: warm the bowls' });
  assert.equal(note.pending.length, 1, JSON.stringify(note));
  const onNote = await ok('GET', `/v1/conversations/${id}`);
  assert.equal(onNote.recipe.version, 2, 'the recipe version at the branch point');
  assert.equal(onNote.pendingPatchSet?.pendingId, note.pending[0].id);

  // back to the first branch: version 3 again, and the note's PatchSet, left behind, is withdrawn
  const back = await ok('POST', `/v1/conversations/${id}/branch`, { leafId: asked.id });
  assert.equal(back.recipe.version, 3);
  assert.equal(back.pendingPatchSet, null);
  assert.deepEqual(back.pending, []);
  const late = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: note.pending[0].id, decision: 'accept' } });
  assert.equal(late.status, 409, JSON.stringify(late.body));
  assert.equal((await ok('GET', `/v1/conversations/${id}`)).recipe.version, 3);

  // a fork from the first answer starts from the state kept with it (before any change was accepted)
  const forked = await ok('POST', `/v1/conversations/${id}/fork`, { messageId: swap.messages.at(-1).id });
  const fork = await ok('GET', `/v1/conversations/${forked.id}`);
  assert.equal(fork.recipe.version, 1);
  assert.deepEqual(fork.pending, []);
});
