// The services of a benchmark run in the cluster shape (stack/cluster.ts): embedded PostgreSQL as
// `npm run cluster` runs it (fsync on, like the dev-server run's), a Temporal server built from source with 4 history shards (TEMPORAL_HISTORY_SHARDS),
// and BENCH_CLUSTER_WORKERS worker processes (default 1, the same count as the dev-server run's in-process
// worker) with the offline model. The bench drives them through the client as it drives the dev server.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCluster } from '../stack/cluster.ts';
import { TEMPORAL_SERVER_VERSION } from '../stack/temporal-server-binary.ts';
import type { BenchServices } from './services.ts';
import { BENCH_PAYLOAD_ENV } from './payload-key.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

export async function startClusterServices(log: (line: string) => void, modelEnv: Record<string, string> = {}): Promise<BenchServices> {
  const started = performance.now();
  const tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-bench-cluster-'));
  await fs.chmod(tmpDir, 0o755);
  const workers = Number(process.env.BENCH_CLUSTER_WORKERS ?? 1);
  const shards = Number(process.env.TEMPORAL_HISTORY_SHARDS ?? 4);
  const { bundleWorkflows } = await import('../stack/bundle-workflows.ts');
  const bundlePath = path.join(tmpDir, 'workflow-bundle.js');
  await bundleWorkflows({ outFile: bundlePath, catalog: builtInCatalog(), log: { warn: log, error: log } });
  let cluster;
  try {
    cluster = await startCluster({
      catalog: builtInCatalog(),
      dataDir: path.join(tmpDir, 'cluster'),
      // as `npm run cluster` (bin/cluster.ts): durable PostgreSQL for Temporal's history and Brigade's rows
      ephemeral: false,
      workers,
      historyShards: shards,
      workflowBundlePath: bundlePath,
      // the bench's model (its Gemini-wire server), or the offline model, whatever the caller's environment holds
      env: { GEMINI_API_KEY: '', LOG_LEVEL: 'warn', ...BENCH_PAYLOAD_ENV, ...modelEnv },
      log,
    });
  } catch (error) {
    await fs.rm(tmpDir, { recursive: true, force: true });
    throw error;
  }
  const processes: Record<number, string> = {
    [cluster.temporal.pid!]: 'temporal server',
    [cluster.api.pid!]: 'api (idle)',
    [cluster.ui.pid!]: 'web ui',
  };
  cluster.workers.forEach((worker, index) => (processes[worker.pid!] = `worker ${index + 1}`));
  return {
    databaseUrl: cluster.postgres.url,
    temporalAddress: cluster.temporalAddress,
    bundlePath,
    taskQueue: cluster.taskQueue,
    processes,
    describe: {
      postgres: 'embedded, as npm run cluster runs it (fsync on; Temporal persistence and Brigade in one server)',
      temporal: `temporal-server ${TEMPORAL_SERVER_VERSION} on PostgreSQL, ${shards} history shards, ${workers} worker process(es), the app's dynamic config`,
    },
    startupMs: performance.now() - started,
    stop: async () => {
      await cluster.stop();
      await fs.rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}
