// `npm run bench`: every benchmark, one after the other so none competes with another for the 2 cores, each
// printing its own figures. Arguments go to the turn bench (`-- --cluster` adds the cluster shape beside the
// dev server); `npm run bench:<name>` runs one alone.
import { spawnSync } from 'node:child_process';

const BENCHES: { name: string; file: string; args: string[] }[] = [
  { name: 'turns', file: 'bench/turns.ts', args: process.argv.slice(2) },
  { name: 'sql-guard', file: 'bench/sql-guard.ts', args: [] },
  { name: 'save-pipeline', file: 'bench/save-pipeline.ts', args: [] },
  { name: 'beer', file: 'bench/beer.ts', args: [] },
  { name: 'stream', file: 'bench/stream-lag.ts', args: [] },
];

let failed = 0;
for (const bench of BENCHES) {
  console.log(`\n=== bench: ${bench.name} ===`);
  const run = spawnSync(process.execPath, [bench.file, ...bench.args], { stdio: 'inherit' });
  if (run.status !== 0) {
    failed += 1;
    console.error(`bench ${bench.name} exited with ${run.status ?? run.signal}`);
  }
}
process.exit(failed ? 1 : 0);
