import { closeServer } from '../src/api/listen.ts';
import { metricsPort, serveMetrics } from '../src/api/metrics.ts';
import type { Config } from '../src/config.ts';
import { collectProcessMetrics } from '../src/telemetry/metrics.ts';
import type { Lifecycle } from './lifecycle.ts';

let started = false;

/** METRICS_PORT: GET /metrics on a listener of its own, once per process (npm start runs the worker and the API). */
export async function startMetricsPort(config: Config, onStop: Lifecycle['onStop']): Promise<number | undefined> {
  if (config.METRICS_ENABLED || config.METRICS_PORT) collectProcessMetrics();
  if (!config.METRICS_PORT || started) return undefined;
  started = true;
  const server = await serveMetrics(config.METRICS_PORT, config.METRICS_HOST);
  onStop('metrics listener', () => closeServer(server));
  return metricsPort(server);
}
