// What tracing costs per turn: the same turns with tracing off and with tracing on (OTLP/HTTP JSON to a
// receiver in the parent process), each mode in a fresh child process (tracing is installed once per
// process), alternated so drift in the machine's load falls on both. Also the per-call cost of what stays on
// the path with tracing off (the model and tool wrappers, which then only count metrics).
//   node bench/tracing.ts                      BENCH_TURNS=40 BENCH_ROUNDS=2
// Printed figures, not a test: a loaded machine moves them; compare modes within one run.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_PAYLOAD_ENV } from './payload-key.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP = 5;
const TOKEN = 'bench-tracing-token-0000000000';

interface ChildResult {
  mode: 'off' | 'on';
  latencyMs: number[];
  cpuMsPerTurn: number;
  spans?: number;
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

async function child(mode: 'off' | 'on') {
  const { initTracing } = await import('../src/telemetry/tracing.ts');
  const tracing =
    mode === 'on'
      ? initTracing({
          OTEL_EXPORTER_OTLP_ENDPOINT: process.env.BENCH_OTLP!,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'brigade-bench',
        })
      : initTracing({});
  const { Runtime, DefaultLogger, NativeConnection } = await import('@temporalio/worker');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const { Client, Connection } = await import('@temporalio/client');
  const { loadConfig } = await import('../src/config.ts');
  const { createPool } = await import('../src/db/pool.ts');
  const { createWorker } = await import('../stack/worker.ts');
  const { createApp } = await import('../src/api/app.ts');
  const { clientInterceptors } = await import('../src/telemetry/temporal.ts');
  const taskQueue = `bench-tracing-${process.pid}`;
  const config = loadConfig(
    {
      DATABASE_URL: process.env.BENCH_DB!,
      TEMPORAL_ADDRESS: process.env.BENCH_TEMPORAL!,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...BENCH_PAYLOAD_ENV,
    },
    builtInCatalog(),
  );
  const pool = createPool(config.DATABASE_URL!);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS! });
  const { dataConverter } = await import('../src/protection/data-converter.ts');
  const client = new Client({ connection, interceptors: clientInterceptors(), dataConverter: dataConverter(config, pool) });
  const workerConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS! });
  const worker = await createWorker({
    catalog: builtInCatalog(),
    config,
    connection: workerConnection,
    pool,
    workflowBundlePath: process.env.BENCH_BUNDLE!,
  });
  const running = worker.run();
  const app = createApp({
    catalog: builtInCatalog(),
    config,
    client,
    pool,
    tokens: { [TOKEN]: { user: 'bench', roles: ['support'] } },
    checkTemporal: async () => undefined,
    log: () => undefined,
  });
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  const call = async (route: string, body: unknown) => {
    const response = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${route}: ${response.status} ${JSON.stringify(json)}`);
    return json as { id: string };
  };
  const latencyMs: number[] = [];
  let cpu = 0;
  for (let i = 0; i < WARMUP + TURNS; i++) {
    // a conversation per 5 turns, so transcripts stay short and alike across modes
    const { id } =
      i % 5 === 0 || !(globalThis as any).conv ? await call('/v1/conversations', { agent: 'support' }) : { id: (globalThis as any).conv };
    (globalThis as any).conv = id;
    const before = process.cpuUsage();
    const started = performance.now();
    await call(`/v1/conversations/${id}/messages`, { text: 'What are the orders of john@gmail.com?' });
    const elapsed = performance.now() - started;
    const used = process.cpuUsage(before);
    if (i >= WARMUP) {
      latencyMs.push(elapsed);
      cpu += (used.user + used.system) / 1000;
    }
  }
  await tracing.flush();
  worker.shutdown();
  await running;
  server.close();
  await workerConnection.close();
  await connection.close();
  await pool.end();
  await tracing.shutdown();
  const result: ChildResult = { mode, latencyMs, cpuMsPerTurn: cpu / TURNS };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
}

/** The per-call cost of the wrappers that stay on the path with tracing off. */
async function wrapperCost() {
  const { instrumentModel, instrumentTools } = await import('../src/telemetry/model.ts');
  const reply = { text: 'ok', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, model: 'm' };
  const bare = { name: 'm', generate: async () => reply };
  const wrapped = instrumentModel(bare);
  const tool = { t: async () => ({ ok: true }) };
  const wrappedTool = instrumentTools(tool);
  const request = { system: '', messages: [], tools: [] };
  const ctx = { callId: 'c' } as any;
  const time = async (fn: () => Promise<unknown>, n = 200_000) => {
    for (let i = 0; i < 10_000; i++) await fn();
    const started = performance.now();
    for (let i = 0; i < n; i++) await fn();
    return ((performance.now() - started) * 1e6) / n; // ns per call
  };
  const model = (await time(() => wrapped.generate(request))) - (await time(() => bare.generate()));
  const tools = (await time(() => wrappedTool.t!({}, ctx))) - (await time(() => tool.t()));
  return { modelNs: model, toolNs: tools };
}

async function parent() {
  const { startServices } = await import('./services.ts');
  const { startOtlpReceiver } = await import('../test/support/otlp-receiver.ts');
  const { WORKFLOW_INTERCEPTOR_MODULES } = await import('../src/telemetry/temporal.ts');
  const { BUNDLER_OPTIONS, writeWorkflowEntry } = await import('../stack/bundle-workflows.ts');
  const say = (line: string) => console.log(line);
  say('Starting PostgreSQL and the Temporal dev server, bundling the workflows with their interceptors...');
  const services = await startServices(() => undefined);
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const noop = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: await writeWorkflowEntry(builtInCatalog()),
    ...BUNDLER_OPTIONS,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop },
  });
  const bundle = path.join(os.tmpdir(), `brigade-bench-tracing-${process.pid}.js`);
  await fs.writeFile(bundle, code);
  const receiver = await startOtlpReceiver();
  const results: ChildResult[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const spansBefore = receiver.spans.length;
        const out = await new Promise<string>((resolve, reject) => {
          const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', mode], {
            env: {
              ...process.env,
              BENCH_DB: services.databaseUrl,
              BENCH_TEMPORAL: services.temporalAddress,
              BENCH_BUNDLE: bundle,
              BENCH_OTLP: receiver.endpoint,
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let text = '';
          proc.stdout.on('data', (chunk) => (text += chunk));
          proc.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`child ${mode} exited ${code}`))));
        });
        const result = JSON.parse(
          out
            .split('\n')
            .find((line) => line.startsWith('RESULT '))!
            .slice(7),
        ) as ChildResult;
        if (mode === 'on') {
          await new Promise((resolve) => setTimeout(resolve, 500));
          result.spans = (receiver.spans.length - spansBefore) / (TURNS + WARMUP);
        }
        results.push(result);
        say(
          `  round ${round + 1} tracing ${mode.padEnd(3)}: p50 ${pct(result.latencyMs, 50).toFixed(1)} ms, mean ${mean(result.latencyMs).toFixed(1)} ms, CPU ${result.cpuMsPerTurn.toFixed(2)} ms/turn${result.spans !== undefined ? `, ${result.spans.toFixed(1)} spans/turn` : ''}`,
        );
      }
    }
  } finally {
    await receiver.close();
    await services.stop();
    await fs.rm(bundle, { force: true });
  }
  const of = (mode: 'off' | 'on') => results.filter((r) => r.mode === mode);
  const all = (mode: 'off' | 'on') => of(mode).flatMap((r) => r.latencyMs);
  const cpu = (mode: 'off' | 'on') => mean(of(mode).map((r) => r.cpuMsPerTurn));
  const offRuns = of('off').map((r) => pct(r.latencyMs, 50));
  say('');
  say(`Tracing cost per turn (${TURNS} turns x ${ROUNDS} rounds per mode, offline model, support agent, API + worker in one process):`);
  say(`  off: p50 ${pct(all('off'), 50).toFixed(1)} ms, p95 ${pct(all('off'), 95).toFixed(1)} ms, CPU ${cpu('off').toFixed(2)} ms/turn`);
  say(
    `  on:  p50 ${pct(all('on'), 50).toFixed(1)} ms, p95 ${pct(all('on'), 95).toFixed(1)} ms, CPU ${cpu('on').toFixed(2)} ms/turn, ${mean(of('on').map((r) => r.spans ?? 0)).toFixed(1)} spans/turn`,
  );
  say(
    `  on - off: ${(pct(all('on'), 50) - pct(all('off'), 50)).toFixed(1)} ms p50, ${(cpu('on') - cpu('off')).toFixed(2)} ms CPU per turn`,
  );
  say(`  noise floor (spread of the off runs' p50): ${(Math.max(...offRuns) - Math.min(...offRuns)).toFixed(1)} ms`);
  const wrappers = await wrapperCost();
  say(
    `  with tracing off, the model and tool wrappers add ${Math.max(0, wrappers.modelNs).toFixed(0)} ns and ${Math.max(0, wrappers.toolNs).toFixed(0)} ns per call (metrics counters only)`,
  );
}

if (process.argv[2] === '--child') await child(process.argv[3] as 'off' | 'on');
else await parent();
