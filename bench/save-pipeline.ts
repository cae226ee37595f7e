// npm run bench:save-pipeline: what the save pipeline itself costs, with every model step instant (the offline
// task model: a parser, a template, a 64x64 PNG) and the local object store, so the figures are Temporal's
// and PostgreSQL's share: five activities, ten progress records, the staging and publishing of the image and
// the insert. saveRecipe workflows are started directly through @temporalio/client, as chatSession starts
// them as children. Prints aligned text, then one JSON line. Settings (env, with defaults):
//   BENCH_SAVES=50         measured saves per run (sequential, then concurrent)
//   BENCH_WARMUP=3         unmeasured saves first
//   BENCH_CONCURRENCY=10   saves in flight at once in the concurrent run
//   BENCH_DATABASE_URL, BENCH_TEMPORAL_ADDRESS: see bench/services.ts
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import protoModule from '@temporalio/proto';
import { sessionSettings } from '../src/api/session-settings.ts';
import { loadConfig } from '../src/config.ts';
import { insertConversation } from '../src/db/conversations.ts';
import { asUser, createPool } from '../src/db/pool.ts';
import type { ChildToolInput, ChildToolOutput } from '../src/shared/child-tool.ts';
import { installTemporalRuntime } from '../stack/temporal-runtime.ts';
import { createWorker } from '../stack/worker.ts';
import { startServices } from './services.ts';
import { round, summarise, type Summary } from './stats.ts';
import { BENCH_PAYLOAD_ENV } from './payload-key.ts';
import { dataConverter } from '../src/protection/data-converter.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

const EventType = protoModule.temporal.api.enums.v1.EventType;
type HistoryEvent = protoModule.temporal.api.history.v1.IHistoryEvent;

const int = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const SAVES = int('BENCH_SAVES', 50);
const WARMUP = int('BENCH_WARMUP', 3);
const CONCURRENCY = int('BENCH_CONCURRENCY', 10);

const RECIPE =
  'Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. ' +
  'Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. ' +
  'Prep time: 5 minutes. Serves: 1. Type: cocktail.';

const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (from: number) => performance.now() - from;

const services = await startServices(() => undefined);
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-bench-save-'));
installTemporalRuntime('warn');
const taskQueue = `bench-save-${process.pid}`;
const config = loadConfig(
  {
    DATABASE_URL: services.databaseUrl,
    TEMPORAL_ADDRESS: services.temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ...BENCH_PAYLOAD_ENV,
  },
  builtInCatalog(),
);
const pool = createPool(services.databaseUrl);
// PostgreSQL stops with the services; a connection it closes then is no failure of the bench.
pool.on('error', () => undefined);
const nativeConnection = await NativeConnection.connect({ address: services.temporalAddress });
const worker = await createWorker({
  catalog: builtInCatalog(),
  config,
  connection: nativeConnection,
  pool,
  workflowBundlePath: services.bundlePath,
  taskQueue,
});
const running = worker.run();
const connection = await Connection.connect({ address: services.temporalAddress });
const client = new Client({ connection, dataConverter: dataConverter(config, pool) });

const userId = 'bench';
const conversationId = randomUUID();
await asUser(pool, userId, (db) =>
  insertConversation(db, {
    id: conversationId,
    userId,
    agent: 'recipes',
    client: null,
    title: 'bench',
    workflowId: `conversation-${conversationId}`,
  }),
);

/** One save, start to result, in the client; its workflow ID for the history. */
async function save(): Promise<{ latencyMs: number; workflowId: string }> {
  const id = randomUUID();
  const input: ChildToolInput = {
    id,
    conversationId,
    userId,
    parentWorkflowId: `conversation-${conversationId}`,
    callId: randomUUID(),
    tool: 'save_recipe',
    args: { raw_recipe_data: RECIPE },
    settings: sessionSettings(config, builtInCatalog()),
  };
  const workflowId = `save-recipe-${id}`;
  const started = performance.now();
  const output = await client.workflow.execute<(input: ChildToolInput) => Promise<ChildToolOutput>>('saveRecipe', {
    workflowId,
    taskQueue,
    args: [input],
  });
  const latencyMs = ms(started);
  if (output.result.status !== 'saved' || !output.result.image_url) throw new Error(`a save failed: ${JSON.stringify(output.result)}`);
  return { latencyMs, workflowId };
}

const timeOf = (event: HistoryEvent) => Number(event.eventTime!.seconds) * 1000 + event.eventTime!.nanos! / 1e6;

/** Server-side: the workflow's span, and each activity's scheduled-to-closed time, from the history. */
async function phases(workflowId: string): Promise<Record<string, number>> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const out: Record<string, number> = { workflow: timeOf(events.at(-1)!) - timeOf(events[0]!) };
  const scheduled = new Map<string, { name: string; at: number }>();
  for (const event of events) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes) scheduled.set(String(event.eventId), { name: attributes.activityType!.name!, at: timeOf(event) });
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const from = scheduled.get(String(event.activityTaskCompletedEventAttributes!.scheduledEventId));
      if (from) out[from.name] = timeOf(event) - from.at;
    }
  }
  out.events = events.length;
  return out;
}

const fmt = (summary: Summary) =>
  `p50 ${round(summary.p50)} ms, p95 ${round(summary.p95)} ms, p99 ${round(summary.p99)} ms, mean ${round(summary.mean)} ms, max ${round(summary.max)} ms (n=${summary.count})`;

try {
  log(`save-pipeline bench: ${WARMUP} warmup, ${SAVES} sequential, ${SAVES} at ${CONCURRENCY} in flight`);
  for (let i = 0; i < WARMUP; i++) await save();

  const sequential: { latencyMs: number; workflowId: string }[] = [];
  for (let i = 0; i < SAVES; i++) sequential.push(await save());

  const concurrent: number[] = [];
  const concurrentStarted = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < SAVES) {
        next += 1;
        concurrent.push((await save()).latencyMs);
      }
    }),
  );
  const concurrentSeconds = ms(concurrentStarted) / 1000;

  const phaseRuns = await Promise.all(sequential.map((run) => phases(run.workflowId)));
  const phaseNames = ['workflow', 'structureRecipe', 'writeImagePrompt', 'generateRecipeImage', 'uploadRecipeImage', 'insertRecipe'];
  const phaseP50 = Object.fromEntries(phaseNames.map((name) => [name, round(summarise(phaseRuns.map((run) => run[name] ?? NaN)).p50)]));

  const saved = await asUser(
    pool,
    userId,
    async (db) => (await db.query('SELECT count(*)::int AS n FROM saved_recipes')).rows[0].n as number,
  );

  const seq = summarise(sequential.map((run) => run.latencyMs));
  const con = summarise(concurrent);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say('');
  say(`Save pipeline overhead (offline task model: every model step instant; local object store)`);
  say(
    `  machine      ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}`,
  );
  say(`  services     PostgreSQL: ${services.describe.postgres}; Temporal: ${services.describe.temporal}`);
  say(`  sequential   ${fmt(seq)}`);
  say(`  concurrent   ${fmt(con)}; ${round(SAVES / concurrentSeconds)} saves/s at ${CONCURRENCY} in flight`);
  say(
    `  server-side  p50 per save: ${Object.entries(phaseP50)
      .map(([name, value]) => `${name} ${value} ms`)
      .join(', ')}`,
  );
  say(`  history      ${round(summarise(phaseRuns.map((run) => run.events!)).p50, 0)} events per save`);
  say(`  rows         ${saved} saved (${WARMUP + 2 * SAVES} expected)`);
  say(
    JSON.stringify({
      bench: 'save-pipeline',
      saves: SAVES,
      concurrency: CONCURRENCY,
      sequential: { p50: round(seq.p50), p95: round(seq.p95), p99: round(seq.p99), mean: round(seq.mean) },
      concurrent: {
        p50: round(con.p50),
        p95: round(con.p95),
        p99: round(con.p99),
        mean: round(con.mean),
        savesPerSecond: round(SAVES / concurrentSeconds),
      },
      serverSideP50: phaseP50,
      loadAverage: os.loadavg(),
    }),
  );
  if (saved !== WARMUP + 2 * SAVES) throw new Error(`expected ${WARMUP + 2 * SAVES} rows, found ${saved}`);
} finally {
  worker.shutdown();
  await running.catch(() => undefined);
  await connection.close();
  await nativeConnection.close();
  await pool.end();
  await services.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
}
