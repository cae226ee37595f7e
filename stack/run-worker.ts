import type pg from 'pg';
import type { Client } from '@temporalio/client';
import { ensureRetentionSchedule } from '../src/protection/retention.ts';
import type { Config } from '../src/config.ts';
import type { ServerCatalog } from '../src/api/agent-server.ts';
import { createWorker } from './worker.ts';
import { connectTemporalWorker } from './connect.ts';
import type { Lifecycle } from './lifecycle.ts';
import { installTemporalRuntime } from './temporal-runtime.ts';
import { setSdkMetricsUrl } from '../src/api/metrics.ts';
import { startMetricsPort } from './metrics-port.ts';
import { freePort } from './ports.ts';
import { promoteWhenPolling } from '../src/worker-deployment.ts';

/**
 * Runs the worker for the life of the process: a worker that stops on its own is a failure, and the
 * process's stop drains it before the connections and services behind it go away.
 */
export async function runWorker(
  catalog: ServerCatalog,
  config: Config,
  address: string,
  pool: pg.Pool,
  { onStop, fail }: Pick<Lifecycle, 'onStop' | 'fail'>,
  { client, log = () => undefined }: { client?: Client; log?: (line: string) => void } = {},
) {
  // METRICS_PORT is bound first: a free port picked before it could be METRICS_PORT itself
  await startMetricsPort(config, onStop);
  const prometheusPort = config.METRICS_ENABLED || config.METRICS_PORT ? await freePort() : undefined;
  installTemporalRuntime(config.LOG_LEVEL, { prometheusPort });
  if (prometheusPort) setSdkMetricsUrl(`http://127.0.0.1:${prometheusPort}/metrics`);
  const connection = await connectTemporalWorker(address);
  onStop('Temporal worker connection', () => connection.close());
  const worker = await createWorker({ catalog, config, connection, pool, client });
  // the retention sweep's schedule follows the settings (removed when no retention is set)
  if (client) await ensureRetentionSchedule(client, config);
  const running = worker.run();
  running.then(
    () => fail(new Error('The Temporal worker stopped unexpectedly')),
    (error: unknown) => fail(new Error(`The Temporal worker failed: ${(error as Error).message}`)),
  );
  onStop('Temporal worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
  const deployment = worker.options.workerDeploymentOptions;
  if (deployment?.useWorkerVersioning) {
    const { deploymentName, buildId } = deployment.version;
    const done = await promoteWhenPolling(connection, config.TEMPORAL_NAMESPACE, { deploymentName, buildId }, config.WORKER_SET_CURRENT);
    log(`Worker version ${deploymentName}:${buildId} (${deployment.defaultVersioningBehavior.toLowerCase().replace('_', '-')}): ${done}`);
  }
}
