// The fault drills as tests, on one cluster shape for the file (they take minutes, so .ci/run runs them after
// `npm test` with `npm run test:drills`). Each asserts what `npm run drill` prints: every turn answered,
// nothing lost, nothing done twice, no other promise broken. DRILLS=4 (or 1,3) runs only those.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DRILLS } from './drills.ts';
import { startDrillCluster, type DrillCluster } from './harness.ts';

let drill: DrillCluster;
const log = process.env.DRILL_DEBUG ? (line: string) => console.error(line) : () => undefined;

before(async () => {
  drill = await startDrillCluster({
    workers: 2,
    log,
    processLog: process.env.DRILL_DEBUG ? (name, line) => console.error(`[${name}] ${line}`) : undefined,
  });
});
after(async () => {
  await drill?.stop();
});

const only = (process.env.DRILLS ?? '')
  .split(',')
  .map(Number)
  .filter((id) => Number.isInteger(id) && id > 0);

for (const entry of only.length ? DRILLS.filter((drill) => only.includes(drill.id)) : DRILLS) {
  test(`drill ${entry.id}: ${entry.name}`, async () => {
    const started = performance.now();
    const outcome = await entry.run(drill, log);
    assert.deepEqual(outcome.lost, [], 'nothing lost');
    assert.deepEqual(outcome.doubled, [], 'nothing done twice');
    assert.deepEqual(outcome.wrong ?? [], [], 'no promise broken (deadlines, calls that must not happen)');
    assert.equal(outcome.answered, outcome.turns, 'every turn answered');
    console.log(
      `# drill ${entry.id}: down ${(outcome.downMs / 1000).toFixed(1)} s, recovery ${(outcome.recoveryMs / 1000).toFixed(1)} s, ` +
        `${outcome.answered}/${outcome.turns} turns, took ${((performance.now() - started) / 1000).toFixed(1)} s; ${outcome.notes.join('; ')}`,
    );
  });
}
