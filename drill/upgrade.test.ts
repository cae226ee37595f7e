// The upgrade drill as a test (`npm run test:drills`, after `npm test` in .ci/run): a nondeterministic version 2
// deployed under parked, idle and mid-pipeline conversations by the handbook's procedure loses nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { upgradeDrill } from './upgrade.ts';

test('upgrade drill: version 2 deployed under running conversations by the handbook', async () => {
  const log = process.env.DRILL_DEBUG ? (line: string) => console.error(line) : () => undefined;
  const outcome = await upgradeDrill(log, process.env.DRILL_DEBUG ? (name, line) => console.error(`[${name}] ${line}`) : undefined);
  assert.deepEqual(outcome.wrong, [], 'no promise broken');
  assert.notEqual(outcome.v1, outcome.v2);
  for (const row of outcome.conversations) assert.equal(row.finishedOn, outcome.v2, `${row.name} runs on version 2`);
  assert.ok(outcome.conversations.find((row) => row.name === 'idle')!.runs >= 2, 'the idle conversation continued as new');
  console.log(`# upgrade drill: ${outcome.v1} -> ${outcome.v2}; ${outcome.notes.join('; ')}`);
});
