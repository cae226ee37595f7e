import { DefaultLogger, Runtime, type LogEntry, type LogLevel as TemporalLogLevel } from '@temporalio/worker';
import type { LogLevel } from './log.ts';
import { safeLogMeta } from '../src/shared/log-safe.ts';

const LEVELS: Record<LogLevel, TemporalLogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };
const QUIET = new Set<TemporalLogLevel>(['TRACE', 'DEBUG', 'INFO']);

/**
 * Must run before the first NativeConnection. The SDK would otherwise stop workers on SIGINT by
 * itself; we stop them in our own order (API first, then the worker drains, then the services).
 */
export function installTemporalRuntime(level: LogLevel, options: { prometheusPort?: number } = {}): void {
  const write = (entry: LogEntry) => {
    // The worker's own housekeeping at info (bundle statistics, state changes) drowns the start-up
    // banner; workflow and activity logs keep the configured level.
    if (level !== 'debug' && entry.meta?.sdkComponent === 'worker' && QUIET.has(entry.level)) return;
    // The SDK hands a failed activity's error itself: its message (a provider's, a tool's) is not the log's.
    const meta = entry.meta ? ` ${JSON.stringify(safeLogMeta(entry.meta))}` : '';
    process.stderr.write(`[${entry.level}] ${entry.message}${meta}\n`);
  };
  Runtime.install({
    logger: new DefaultLogger(LEVELS[level], write),
    shutdownSignals: [],
    // the SDK's own metrics (temporal_*: task latencies, slots, polls), which GET /metrics appends to Brigade's
    ...(options.prometheusPort
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${options.prometheusPort}` } } } }
      : {}),
  });
}
