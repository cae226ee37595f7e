// A conversation of lookup turns, as bench/turns.ts runs them: a turn adds the same six events to the history
// (one workflow task: the Update, the model step's marker, its answer), the history replays, and with
// RECORD_HISTORIES=1 the 1-turn and 21-turn histories are kept for bench/workflow-cpu.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../support/harness.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const { History } = proto.temporal.api.history.v1;
const HISTORIES = path.join(import.meta.dirname, '../histories');

let app: TestApp;
before(async () => {
  // the offline model; one run for the whole conversation
  app = await startTestApp({ env: { CONTINUE_AS_NEW_AFTER_TURNS: '1000' } });
});
after(async () => app?.stop());

async function conversation(turns: number) {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const counts: number[] = [];
  const handle = app.client.workflow.getHandle(created.body.workflowId);
  for (let i = 0; i < turns; i++) {
    const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'look up john@gmail.com' } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.match(turn.body.messages.at(-1).text, /^Customer 1213210: John Doe/, 'the lookup was answered');
    counts.push((await handle.fetchHistory()).events!.length);
  }
  return { history: await handle.fetchHistory(), workflowId: created.body.workflowId as string, counts };
}

test('a lookup turn adds six events to the history (one workflow task), and the history replays', async () => {
  for (const turns of [1, 21]) {
    const { history, workflowId, counts } = await conversation(turns);
    const added = counts.slice(1).map((count, i) => count - counts[i]!);
    // the Update accepted, the model step's marker, the Update completed, and the workflow task that carried them;
    // the first turn's title and a compaction of the older turns are activities whose events (with the workflow
    // task each completion wakes, a marker and a search attributes' upsert: 8 at most) land in whichever turn is on
    const sixes = added.filter((n) => n === 6).length;
    assert.ok(sixes >= added.length / 2, `events per turn: ${added.join(', ')}`);
    assert.ok(added.reduce((sum, n) => sum + n, 0) <= 6 * added.length + 16, `events per turn: ${added.join(', ')}`);
    await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, workflowId);
    if (process.env.RECORD_HISTORIES === '1')
      await fs.writeFile(path.join(HISTORIES, `lookup-turns-${turns}.binpb`), History.encode(history).finish());
  }
});
