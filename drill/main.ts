// `npm run drill`: brings up the cluster shape (stack/cluster.ts) in a temp dir, runs each fault drill
// against it and prints a table; exits 1 when a drill fails or anything was lost or done twice.
//   npm run drill            every drill
//   npm run drill -- 1 3     drills 1 and 3
//   DRILL_DEBUG=1            print the cluster processes' output
//   npm run drill -- upgrade the upgrade drill (drill/upgrade.ts), on a cluster of its own
import { DRILLS, type DrillOutcome } from './drills.ts';
import { startDrillCluster } from './harness.ts';
import { upgradeDrill } from './upgrade.ts';

if (process.argv.includes('upgrade')) {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const outcome = await upgradeDrill(say, process.env.DRILL_DEBUG ? (name, line) => say(`[${name}] ${line}`) : undefined);
  console.log(`upgrade drill: ${outcome.v1} -> ${outcome.v2}`);
  for (const row of outcome.conversations) console.log(`  ${row.name.padEnd(10)} ${row.runs} run(s), now on ${row.finishedOn}`);
  for (const note of outcome.notes) console.log(`  ${note}`);
  for (const line of outcome.wrong) console.log(`  WRONG: ${line}`);
  process.exit(outcome.wrong.length ? 1 : 0);
}

const wanted = process.argv.slice(2).map(Number).filter(Number.isInteger);
const drills = wanted.length ? DRILLS.filter((drill) => wanted.includes(drill.id)) : DRILLS;
const log = (line: string) => process.stderr.write(`${line}\n`);

const started = performance.now();
log('drill: starting the cluster shape (PostgreSQL, Temporal server, Web UI, 2 workers, API)...');
const drill = await startDrillCluster({
  workers: 2,
  log,
  processLog: process.env.DRILL_DEBUG ? (name, line) => log(`[${name}] ${line}`) : undefined,
});
log(`drill: cluster up in ${((performance.now() - started) / 1000).toFixed(1)} s`);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) process.exit(130);
    stopping = true;
    log('drill: stopping the cluster');
    void drill.stop().finally(() => process.exit(130));
  });
}

const rows: { id: number; name: string; outcome?: DrillOutcome; error?: string; ms: number }[] = [];
for (const entry of drills) {
  const t0 = performance.now();
  log(`drill ${entry.id}: ${entry.name}...`);
  try {
    rows.push({ id: entry.id, name: entry.name, outcome: await entry.run(drill, log), ms: performance.now() - t0 });
  } catch (error) {
    rows.push({ id: entry.id, name: entry.name, error: (error as Error).message, ms: performance.now() - t0 });
  }
}
await drill.stop();

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const table = [
  ['#', 'drill', 'broken (when)', 'down', 'recovery', 'turns answered', 'lost / done twice', 'took'],
  ...rows.map(({ id, name, outcome, error, ms }) =>
    outcome
      ? [
          String(id),
          name,
          outcome.broken,
          s(outcome.downMs),
          s(outcome.recoveryMs),
          `${outcome.answered}/${outcome.turns}`,
          outcome.lost.length + outcome.doubled.length + (outcome.wrong?.length ?? 0) === 0
            ? 'none'
            : `${outcome.lost.length} lost, ${outcome.doubled.length} twice${outcome.wrong?.length ? `, ${outcome.wrong.length} wrong` : ''}`,
          s(ms),
        ]
      : [String(id), name, `FAILED: ${error}`, '-', '-', '-', '-', s(ms)],
  ),
];
const widths = table[0]!.map((_, column) => Math.min(60, Math.max(...table.map((row) => row[column]!.length))));
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
console.log('');
console.log(line(table[0]!));
console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
for (const row of table.slice(1)) console.log(line(row));
console.log('');
for (const { id, outcome } of rows) {
  for (const problem of [...(outcome?.lost ?? []), ...(outcome?.doubled ?? []), ...(outcome?.wrong ?? [])])
    console.log(`drill ${id}: ${problem}`);
  for (const note of outcome?.notes ?? []) console.log(`drill ${id} note: ${note}`);
}
console.log(`drill: ${rows.length} drill(s) in ${s(performance.now() - started)}`);
console.log(JSON.stringify({ drills: rows.map(({ id, outcome, error, ms }) => ({ id, ms: Math.round(ms), error, ...outcome })) }));
const failed = rows.some(
  (row) =>
    row.error ||
    (row.outcome &&
      (row.outcome.lost.length || row.outcome.doubled.length || row.outcome.wrong?.length || row.outcome.answered !== row.outcome.turns)),
);
process.exit(failed ? 1 : 0);
