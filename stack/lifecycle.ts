import { type AgentSettings, ConfigError, loadConfig, type Config } from '../src/config.ts';
import { createLog, type Log } from './log.ts';
import { privateFiles } from './private-data.ts';
import { TracingConfigError, initTracing } from '../src/telemetry/tracing.ts';
import { TemporalTlsError, temporalSecurity } from './temporal-tls.ts';

export interface Lifecycle {
  config: Config;
  log: Log;
  /** Registers how to stop something just started; stops run in reverse order of start. */
  onStop(name: string, stop: () => Promise<unknown> | unknown): void;
  /** Something that should run forever stopped: shut down the rest and exit non-zero. */
  fail(error: unknown): void;
}

/**
 * Runs an entry point: settings first (a bad one is a message, not a stack trace), then `start`.
 * A start-up failure prints one message, stops what had started and exits 1. SIGINT/SIGTERM stop
 * everything in reverse order; a second one exits at once.
 */
export function runMain(agents: AgentSettings, start: (life: Lifecycle) => Promise<void>): void {
  // whatever a Brigade process writes (DATA_DIR: history, objects, tokens) is its owner's alone
  privateFiles();
  let config: Config;
  try {
    config = loadConfig(process.env, agents);
    // TLS / API key / profile file (temporal-tls.ts): read and checked now, so a bad certificate stops the start here
    const profile = temporalSecurity();
    if (!process.env.TEMPORAL_ADDRESS && profile.address) config.TEMPORAL_ADDRESS = profile.address;
    if (!process.env.TEMPORAL_NAMESPACE && profile.namespace) config.TEMPORAL_NAMESPACE = profile.namespace;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof TemporalTlsError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const log = createLog(config.LOG_LEVEL);
  const stops: { name: string; stop: () => Promise<unknown> | unknown }[] = [];
  // OTEL_* (docs/operations.md): first, so the pg and express it patches are patched before any use; stopped last
  try {
    const tracing = initTracing();
    if (tracing.enabled) stops.push({ name: 'tracing', stop: tracing.shutdown });
  } catch (error) {
    if (!(error instanceof TracingConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  let stopping = false;

  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const { name, stop } of stops.reverse()) {
      try {
        log.debug(`stopping ${name}`);
        await stop();
      } catch (error) {
        log.warn(`stopping ${name} failed: ${message(error, config)}`);
      }
    }
    process.exit(code);
  };

  const life: Lifecycle = {
    config,
    log,
    onStop(name, stop) {
      // Started while we were already stopping (a signal during start-up): stop it straight away.
      if (stopping)
        void Promise.resolve()
          .then(stop)
          .catch(() => undefined);
      else stops.push({ name, stop });
    },
    fail(error) {
      if (stopping) return;
      log.error(message(error, config));
      void shutdown(1);
    },
  };

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) {
        log.error('Stopping now, without waiting.');
        process.exit(130);
      }
      log.info('Shutting down (press Ctrl-C again to stop at once)...');
      void shutdown(0);
    });
  }

  // `npm start` runs us under `sh -c`; a SIGTERM to npm (what a supervisor sends) ends npm and the shell but not
  // us, and we are handed to another parent. So a changed parent is a stop too (docs/operations.md).
  const parent = process.ppid;
  setInterval(() => {
    if (stopping || process.ppid === parent) return;
    log.info('The process that started Brigade went away; shutting down...');
    void shutdown(0);
  }, PARENT_CHECK_MS).unref();

  start(life).catch((error: unknown) => life.fail(error));
}

const PARENT_CHECK_MS = 500;

function message(error: unknown, config: Config): string {
  if (!(error instanceof Error)) return String(error);
  return config.LOG_LEVEL === 'debug' && error.stack ? error.stack : error.message;
}

/** For the entry points that run one part against services someone else runs: no embedded fallbacks. */
export function requireSettings<K extends keyof Config>(
  config: Config,
  names: K[],
  command: string,
): asserts config is Config & { [P in K]-?: NonNullable<Config[P]> } {
  const missing = names.filter((name) => config[name] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `${command} runs against existing services and needs ${names.join(' and ')}; not set: ${missing.join(', ')}.\n` +
        `(npm start runs everything in one process, with embedded PostgreSQL and Temporal.)`,
    );
  }
}
