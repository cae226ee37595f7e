// `npm run bench -- --cluster`: the turn bench twice, one run after the other in processes of their own (so one
// run's services do not share the machine with the other's): against the dev server (one process, one history
// shard, the worker in the bench's process) and against the cluster shape (Temporal server on PostgreSQL with
// 4 shards, workers as separate processes). Prints both reports, then the figures side by side.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const TURNS_MAIN = fileURLToPath(new URL('./turns.ts', import.meta.url));

interface RunJson {
  settings: { temporal: string; loadAverage: number[] };
  temporal: Record<string, any>;
}

function runShape(args: string[]): Promise<{ text: string; json: RunJson }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TURNS_MAIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const lines = out.trimEnd().split('\n');
      try {
        resolve({ text: lines.slice(0, -1).join('\n'), json: JSON.parse(lines.at(-1) ?? '') as RunJson });
      } catch {
        reject(new Error(`the bench ${args.join(' ') || '(dev server)'} exited with ${code} and no JSON line:\n${out.slice(-2_000)}`));
      }
    });
  });
}

const f = (value: unknown, digits = 1) => (typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '-');

/** CPU ms per turn of each process group, from a run's % of one core and its throughput. */
function cpuPerTurn(run: any): Record<string, number> {
  if (!run?.cpuPct?.groups || !run.perSecond) return {};
  return Object.fromEntries(
    Object.entries(run.cpuPct.groups as Record<string, number>).map(([name, pct]) => [name, (pct / 100) * (1000 / run.perSecond)]),
  );
}

export async function compareShapes(): Promise<void> {
  const extra = process.argv.slice(2).filter((arg) => arg !== '--cluster');
  process.stderr.write('bench: run 1 of 2, the dev server\n');
  const dev = await runShape(extra);
  process.stderr.write('bench: run 2 of 2, the cluster shape\n');
  const cluster = await runShape([...extra, '--shape=cluster']);
  console.log('==== dev server ====');
  console.log(dev.text);
  console.log('');
  console.log('==== cluster shape ====');
  console.log(cluster.text);
  console.log('');

  const rows: [string, (json: RunJson) => string][] = [
    ['turns/s, closed loop (lookup + chat)', (j) => f(j.temporal.turnsPerSecond)],
    ['lookup p50 / p99 ms, closed loop', (j) => `${f(j.temporal.lookupClosed?.ms.p50)} / ${f(j.temporal.lookupClosed?.ms.p99)}`],
    ['lookup p50 / p99 ms, paced', (j) => `${f(j.temporal.lookupPaced?.ms.p50)} / ${f(j.temporal.lookupPaced?.ms.p99)}`],
    ['chat p50 / p99 ms, paced', (j) => `${f(j.temporal.chatPaced?.ms.p50)} / ${f(j.temporal.chatPaced?.ms.p99)}`],
    ['lookup alone p50 ms (one conversation)', (j) => f(j.temporal.lookupAloneMs?.p50)],
    ['approve -> result p50 ms', (j) => f(j.temporal.approvalToResultMs?.p50)],
    ['load average at the end (1 min)', (j) => f(j.settings.loadAverage[0], 2)],
  ];
  const groups = new Set([
    ...Object.keys(cpuPerTurn(dev.json.temporal.lookupClosed)),
    ...Object.keys(cpuPerTurn(cluster.json.temporal.lookupClosed)),
  ]);
  for (const group of [...groups].sort()) {
    rows.push([`CPU ms/turn, lookup closed: ${group}`, (j) => f(cpuPerTurn(j.temporal.lookupClosed)[group], 2)]);
  }
  rows.push([
    'CPU ms/turn, lookup closed: all of ours',
    (j) =>
      f(
        Object.values(cpuPerTurn(j.temporal.lookupClosed)).reduce((a, b) => a + b, 0),
        2,
      ),
  ]);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  console.log('==== side by side ====');
  console.log(`${''.padEnd(width)}${'dev server'.padStart(16)}${'cluster shape'.padStart(18)}`);
  for (const [label, value] of rows)
    console.log(`${label.padEnd(width)}${value(dev.json).padStart(16)}${value(cluster.json).padStart(18)}`);
  console.log(`dev server:    ${dev.json.settings.temporal}`);
  console.log(`cluster shape: ${cluster.json.settings.temporal}`);
  console.log(JSON.stringify({ bench: 'brigade-turns-shapes', dev: dev.json, cluster: cluster.json }));
}
