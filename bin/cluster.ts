// `npm run cluster`: the production topology of docker-compose.yml without Docker. PostgreSQL (embedded, or
// DATABASE_URL's server), a Temporal server built from source on it, the Temporal Web UI, WORKERS worker
// processes and the API process. Data in DATA_DIR/cluster; a second start finds it. Ctrl-C stops it all.
import path from 'node:path';
import { z } from 'zod';
import { startCluster } from '../stack/cluster.ts';
import { runMain } from '../stack/lifecycle.ts';
import { TEMPORAL_SERVER_VERSION } from '../stack/temporal-server-binary.ts';

const ClusterSettings = z.object({
  WORKERS: z.coerce.number().int().min(1).max(16).default(1),
  TEMPORAL_HISTORY_SHARDS: z.coerce.number().int().min(1).max(1024).default(4),
});

runMain(async ({ config, log, onStop }) => {
  const started = Date.now();
  const parsed = ClusterSettings.safeParse(process.env);
  if (!parsed.success) {
    throw new Error(`Bad cluster settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  const settings = parsed.data;
  const dataDir = path.resolve(config.DATA_DIR, 'cluster');
  const processLine = (name: string, line: string) => {
    // Brigade's own processes log at LOG_LEVEL already; Temporal's are noisy below debug.
    if (name.startsWith('temporal') && config.LOG_LEVEL !== 'debug') return;
    console.log(`[${name}] ${line}`);
  };
  log.info(`Starting the cluster shape (data in ${dataDir}; the first start builds Temporal with Go, a few minutes)...`);
  const cluster = await startCluster({
    dataDir,
    databaseUrl: config.DATABASE_URL,
    ports: {
      frontend: config.TEMPORAL_DEV_PORT,
      ui: config.TEMPORAL_UI_PORT,
      api: config.PORT,
      postgres: config.DATABASE_URL ? undefined : config.EMBEDDED_PG_PORT,
    },
    workers: settings.WORKERS,
    // a prebuilt bundle (as the Docker image has); otherwise the workflows are bundled at every start
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH ? path.resolve(config.WORKFLOW_BUNDLE_PATH) : undefined,
    historyShards: settings.TEMPORAL_HISTORY_SHARDS,
    restartOnFailure: true,
    log: log.info,
    processLog: processLine,
  });
  onStop('cluster processes', () => cluster.stop());

  const s = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
  log.info('');
  log.info(
    `Brigade cluster is running (started in ${((Date.now() - started) / 1000).toFixed(1)} s): docker-compose.yml's topology, natively.`,
  );
  log.info(`  API:             ${cluster.apiUrl}  (process ${cluster.api.pid})`);
  log.info(`  Temporal Web UI: ${cluster.uiUrl}`);
  log.info(
    `  Temporal:        ${cluster.temporalAddress}  (server ${TEMPORAL_SERVER_VERSION}, ${settings.TEMPORAL_HISTORY_SHARDS} history shards, process ${cluster.temporal.pid})`,
  );
  log.info(
    `  PostgreSQL:      ${config.DATABASE_URL ? 'DATABASE_URL' : `embedded, data in ${path.join(dataDir, 'postgres')}`} (databases brigade, temporal, temporal_visibility)`,
  );
  log.info(
    `  Workers:         ${cluster.workers.length} (processes ${cluster.workers.map((w) => w.pid).join(', ')}), task queue ${cluster.taskQueue}`,
  );
  if (cluster.devToken) log.info(`  Dev token:       ${cluster.devToken}  (user "dev"; kept in ${path.join(dataDir, 'app', 'dev-token')})`);
  log.info(
    `  Start:           binaries ${s(cluster.timings.binaries)}, PostgreSQL ${s(cluster.timings.postgres)}, schema ${s(cluster.timings.schema)}, ` +
      `Temporal ${s(cluster.timings.temporal)}, namespace ${s(cluster.timings.namespace)}, UI+workers ${s(cluster.timings['ui+workers'])}, API ${s(cluster.timings.api)}`,
  );
  log.info('Press Ctrl-C to stop.');
});
