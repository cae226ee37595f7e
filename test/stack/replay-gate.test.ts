// The replay gate refuses workflow code that the running conversations' histories cannot replay: drill/workflows-v2.ts
// (chatSession starts with a timer) against the recorded histories, while the code of this commit passes them all.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { bundleWorkflows } from '../../stack/bundle-workflows.ts';
import { recordedHistories, replayAll } from '../../stack/replay-gate.ts';
import { workflowBundlePath } from '../support/harness.ts';

const HISTORIES = path.join(import.meta.dirname, '../histories');

test('the gate passes this commit and refuses a nondeterministic change, naming each history it breaks', async () => {
  const histories = await recordedHistories(HISTORIES);
  assert.ok(histories.length >= 20);

  const current = await replayAll(workflowBundlePath(), histories);
  assert.equal(current.replayed, histories.length);
  assert.deepEqual(current.failures, []);

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-gate-'));
  const changed = path.join(dir, 'workflows-v2.js');
  await bundleWorkflows({ outFile: changed, workflowsPath: path.join(import.meta.dirname, '../../drill/workflows-v2.ts') });
  const refused = await replayAll(changed, histories);
  const conversations = histories.filter(
    ({ history }) => history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'chatSession',
  );
  // A run whose history ends before its first command has nothing for the timer to contradict; every other
  // conversation's history is refused, and no child workflow's (their code did not change).
  const names = new Set(conversations.map(({ source }) => source));
  assert.ok(
    refused.failures.length > conversations.length / 2,
    `${refused.failures.length} of ${conversations.length} conversation histories refused`,
  );
  for (const failure of refused.failures) {
    assert.ok(names.has(failure.source), `${failure.source} is a conversation's history`);
    assert.match(failure.error, /[Nn]ondeterminism|TMPRL1100/, failure.source);
  }
  await fs.rm(dir, { recursive: true, force: true });
});
