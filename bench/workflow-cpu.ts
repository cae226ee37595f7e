// The workflow code's CPU per lookup turn, from replays: a recorded conversation of 21 lookup turns against
// one of a single turn (test/histories/lookup-turns-*.binpb), replayed in this process by the SDK's replay
// worker, which runs the same sandbox, promise hook and activations a live worker does. No servers and no
// other process: a change to workflow code is judged here first, beside bench/turns.ts's whole-stack figures.
//   node bench/workflow-cpu.ts                 the bundle of the tree as it is
//   node bench/workflow-cpu.ts a.js b.js       prebuilt bundles (bin/bundle-workflows.ts), interleaved
//   BENCH_REPLAYS=20 BENCH_ROUNDS=5            replays of each history per round, rounds
import fs from 'node:fs/promises';
import v8 from 'node:v8';
import os from 'node:os';
import path from 'node:path';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { builtInCatalog } from '../src/agents/catalog.ts';
import { bundleWorkflows } from '../stack/bundle-workflows.ts';

const { History } = proto.temporal.api.history.v1;
const HISTORIES = path.join(import.meta.dirname, '../test/histories');
const REPLAYS = Number(process.env.BENCH_REPLAYS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const load = async (name: string) => History.decode(await fs.readFile(path.join(HISTORIES, name)));
const [short, long] = await Promise.all([load('lookup-turns-1.binpb'), load('lookup-turns-21.binpb')]);

let bundles = process.argv.slice(2);
if (bundles.length === 0) {
  const outFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-workflow-cpu-')), 'bundle.js');
  await bundleWorkflows({ catalog: builtInCatalog(), outFile, log: { warn: () => undefined, error: console.error } });
  bundles = [outFile];
}

// promises made in a workflow sandbox (another realm: its own Promise), each of which the SDK's hook records
let sandboxPromises = 0;
v8.promiseHooks.onInit((promise) => {
  if (promise.constructor !== Promise) sandboxPromises += 1;
});

/** CPU ms of this process, and the sandbox's promises, per replay of `history` */
async function replay(bundle: string, history: proto.temporal.api.history.v1.IHistory, count: number) {
  const before = process.cpuUsage();
  const promisesBefore = sandboxPromises;
  const histories = Array.from({ length: count }, (_, i) => ({ workflowId: `replay-${i}`, history }));
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: bundle } }, histories)) {
    if (result.error) throw result.error;
  }
  const { user, system } = process.cpuUsage(before);
  return { cpuMs: (user + system) / 1000 / count, promises: (sandboxPromises - promisesBefore) / count };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const turnsBetween = 20;
const perTurn = new Map<string, { cpuMs: number; promises: number }[]>(bundles.map((bundle) => [bundle, []]));
for (const bundle of bundles) await replay(bundle, long, 3); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const bundle of bundles) {
    const one = await replay(bundle, short, REPLAYS);
    const many = await replay(bundle, long, REPLAYS);
    perTurn.get(bundle)!.push({ cpuMs: (many.cpuMs - one.cpuMs) / turnsBetween, promises: (many.promises - one.promises) / turnsBetween });
  }
}
const report = bundles.map((bundle) => {
  const rounds = perTurn.get(bundle)!;
  return {
    bundle,
    cpuMsPerTurn: +median(rounds.map((r) => r.cpuMs)).toFixed(3),
    promisesPerTurn: median(rounds.map((r) => r.promises)),
    rounds: rounds.map((r) => +r.cpuMs.toFixed(3)),
  };
});
for (const row of report)
  console.log(
    `${row.cpuMsPerTurn.toFixed(3)} ms of CPU and ${row.promisesPerTurn} promises per lookup turn (rounds ${row.rounds.join(', ')}): ${row.bundle}`,
  );
console.log(JSON.stringify(report));
