// `npm run bench`: every benchmark, one after the other so none competes with another for the 2 cores, each
// printing its own figures, then every target side by side. Arguments go to the turn bench (`-- --cluster`
// adds the cluster shape beside the dev server); `npm run bench:<name>` runs one alone.
import { spawnSync } from 'node:child_process';

const BENCHES: { name: string; file: string; args: string[] }[] = [
  { name: 'turns', file: 'bench/turns.ts', args: process.argv.slice(2) },
  { name: 'sql-guard', file: 'bench/sql-guard.ts', args: [] },
  { name: 'save-pipeline', file: 'bench/save-pipeline.ts', args: [] },
  { name: 'beer', file: 'bench/beer.ts', args: [] },
  { name: 'stream', file: 'bench/stream-lag.ts', args: [] },
];

interface Target {
  value: string;
  met: boolean;
}

/** A bench's machine-readable last line, when it has targets ({ "<target>": { value, met } }). */
function targetsOf(stdout: string): Record<string, Target> | undefined {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  try {
    const parsed = JSON.parse(last) as { targets?: Record<string, Target> };
    return parsed.targets && typeof parsed.targets === 'object' ? parsed.targets : undefined;
  } catch {
    return undefined;
  }
}

let failed = 0;
const summary: { bench: string; name: string; target: Target }[] = [];
for (const bench of BENCHES) {
  console.log(`\n=== bench: ${bench.name} ===`);
  const run = spawnSync(process.execPath, [bench.file, ...bench.args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  process.stdout.write(run.stdout ?? '');
  if (run.status !== 0) {
    failed += 1;
    console.error(`bench ${bench.name} exited with ${run.status ?? run.signal}`);
  }
  for (const [name, target] of Object.entries(targetsOf(run.stdout ?? '') ?? {})) summary.push({ bench: bench.name, name, target });
}

if (summary.length) {
  console.log('\n=== targets, side by side ===');
  for (const { bench, name, target } of summary) {
    console.log(`  ${bench.padEnd(14)}${name.padEnd(70)}${target.value.padStart(12)}   ${target.met ? 'met' : 'MISSED'}`);
  }
}
process.exit(failed ? 1 : 0);
