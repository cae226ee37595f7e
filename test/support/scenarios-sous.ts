// A sous conversation for the replay test: PatchSets proposed, accepted and expired, steps marked done,
// and a PatchSet that waits across continue-as-new (the replay test continues as new after three turns).
import assert from 'node:assert/strict';
import type { Scenario } from './scenarios.ts';
import type { TestApp } from './test-app.ts';

async function call(app: TestApp, method: string, path: string, body?: unknown) {
  const response = await app.call(method, path, body === undefined ? {} : { body });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export const sousScenarios: Scenario[] = [
  {
    name: 'sous-patchsets',
    async run(app) {
      const { id } = await call(app, 'POST', '/v1/conversations', { agent: 'sous', title: 'replay', defaults: { hardAvoids: ['peanut'] } });
      const swap = await call(app, 'POST', `/v1/conversations/${id}/messages`, { text: 'swap butter for olive oil' });
      await call(app, 'POST', `/v1/conversations/${id}/decisions`, { pendingId: swap.pending[0].id, decision: 'accept' });
      await call(app, 'POST', `/v1/conversations/${id}/steps/s1/done`);
      const portions = await call(app, 'POST', `/v1/conversations/${id}/messages`, { text: 'make it for 4' });
      await call(app, 'POST', `/v1/conversations/${id}/steps/s2/done`);
      const expired = await app.call('POST', `/v1/conversations/${id}/decisions`, {
        body: { pendingId: portions.pending[0].id, decision: 'accept' },
      });
      assert.equal(expired.status, 409);
      const note = await call(app, 'POST', `/v1/conversations/${id}/messages`, { text: 'add a note: warm the bowls' });
      // the third turn ends the run: the PatchSet waits across continue-as-new and is decided in the next run
      await waitForRun(app, id);
      await call(app, 'POST', `/v1/conversations/${id}/decisions`, { pendingId: note.pending[0].id, decision: 'accept' });
      const view = await call(app, 'GET', `/v1/conversations/${id}`);
      assert.deepEqual(view.recipe.notes, ['warm the bowls']);
      assert.equal(view.recipe.version, 5);
      await call(app, 'POST', `/v1/conversations/${id}/messages`, { text: 'should I add more salt?' });
      return id;
    },
  },
];

/** Waits until the conversation's workflow has continued as new (its run id changes). */
async function waitForRun(app: TestApp, id: string): Promise<void> {
  const handle = app.client.workflow.getHandle(`conversation-${id}`);
  const first = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const now = await app.client.workflow.getHandle(`conversation-${id}`).describe();
    if (now.runId !== first) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the conversation did not continue as new');
}
