// The services a benchmark run needs, in a temp dir and on free loopback ports: embedded PostgreSQL
// (migrated, with the settings `npm start` runs it with: fsync on), the Temporal dev server as `npm start`
// configures it (startTemporalDevServer with a history file, so its SQLite pragmas; headless) and the workflow
// bundle. BENCH_TEMPORAL_MEMORY=1 runs the dev server in memory instead (the tests' shape). BENCH_DATABASE_URL and
// BENCH_TEMPORAL_ADDRESS use running ones instead; BENCH_TEMPORAL_DYNAMIC_CONFIG="key=value key=value" starts
// the dev server with those dynamic config values (for experiments). Everything started here is stopped by stop().
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { migrate } from '../src/db/migrate.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../stack/embedded-postgres.ts';
import { freePort } from '../stack/ports.ts';
import { ensureSearchAttributes, SEARCH_ATTRIBUTES } from '../stack/search-attributes.ts';
import { findTemporalBinary } from '../stack/temporal-binary.ts';
import { SQLITE_PRAGMAS, startTemporalDevServer, type TemporalDevServer } from '../stack/temporal-dev-server.ts';
import { bundleWorkflows } from '../stack/bundle-workflows.ts';
import { BUILT_IN_AGENTS, builtInCatalog } from '../src/agents/catalog.ts';

export interface BenchServices {
  databaseUrl: string;
  temporalAddress: string;
  bundlePath: string;
  /** how each service came to be, for the report */
  describe: { postgres: string; temporal: string };
  /** set when workers run in processes of their own (the cluster shape): the bench then starts none */
  taskQueue?: string;
  /** pid -> label of further processes whose CPU the bench reports */
  processes?: Record<number, string>;
  startupMs: number;
  stop(): Promise<void>;
}

const NAMESPACE = 'default';

export async function startServices(log: (line: string) => void): Promise<BenchServices> {
  const started = performance.now();
  const tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-bench-'));
  // As root, PostgreSQL runs as the `postgres` user, who must be able to enter this directory.
  await fs.chmod(tmpDir, 0o755);
  let postgres: EmbeddedPostgres | undefined;
  let temporal: TemporalDevServer | undefined;

  const stop = async () => {
    await Promise.allSettled([postgres?.stop(), temporal?.stop()]);
    postgres = undefined;
    temporal = undefined;
    await fs.rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
  };

  const startPostgres = async () => {
    const external = process.env.BENCH_DATABASE_URL;
    if (external) {
      await migrate(external, { agents: BUILT_IN_AGENTS });
      return { url: external, how: 'BENCH_DATABASE_URL (existing server)' };
    }
    postgres = await startEmbeddedPostgres({
      dataDir: path.join(tmpDir, 'pg'),
      port: await freePort(),
      database: 'brigade',
      // as `npm start` runs it (bin/start.ts): durable commits, fsync on
      // per-statement figures for the report (bench/pg-statements.ts)
      // BENCH_PG_SETTINGS="name=value ...": further settings, for experiments (synchronous_commit=off, say)
      settings: [
        'shared_preload_libraries=pg_stat_statements',
        'pg_stat_statements.track=all',
        ...(process.env.BENCH_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean),
      ],
      log: (line) => log(line),
    });
    await migrate(postgres.localUrl, { agents: BUILT_IN_AGENTS });
    const extra = process.env.BENCH_PG_SETTINGS?.trim();
    // BENCH_PG_TCP=1: over loopback TCP instead, to measure what the socket gains
    const url = process.env.BENCH_PG_TCP === '1' ? postgres.url : postgres.localUrl;
    const over = url === postgres.url ? 'TCP' : 'its Unix socket';
    return {
      url,
      how: `embedded, as npm start runs it (fsync on, synchronous_commit on, over ${over})${extra ? ` plus ${extra}` : ''}`,
    };
  };

  const startTemporal = async () => {
    const external = process.env.BENCH_TEMPORAL_ADDRESS;
    if (external) {
      const connection = await Connection.connect({ address: external });
      try {
        await ensureSearchAttributes(connection, NAMESPACE);
      } finally {
        await connection.close();
      }
      return { address: external, how: `BENCH_TEMPORAL_ADDRESS=${external} (existing server)` };
    }
    let binary = await findTemporalBinary({ cliPath: process.env.TEMPORAL_CLI_PATH || undefined, log });
    const dynamicConfig = (process.env.BENCH_TEMPORAL_DYNAMIC_CONFIG ?? '').split(/\s+/).filter(Boolean);
    if (dynamicConfig.length > 0) {
      // startTemporalDevServer takes no extra flags: a wrapper that execs the CLI with them keeps its pid and stop().
      const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
      const wrapper = path.join(tmpDir, 'temporal-with-dynamic-config.sh');
      const flags = dynamicConfig.map((entry) => `--dynamic-config-value ${quote(entry)}`).join(' ');
      await fs.writeFile(wrapper, `#!/bin/sh\nexec ${quote(binary)} "$@" ${flags}\n`, { mode: 0o755 });
      binary = wrapper;
    }
    const inMemory = process.env.BENCH_TEMPORAL_MEMORY === '1';
    temporal = await startTemporalDevServer({
      binary,
      port: await freePort(),
      uiPort: 0,
      headless: true,
      // as bin/start.ts: a history file, which startTemporalDevServer opens with SQLITE_PRAGMAS
      ...(inMemory ? {} : { dbFile: path.join(tmpDir, 'temporal.db') }),
      namespace: NAMESPACE,
      searchAttributes: SEARCH_ATTRIBUTES,
      log,
    });
    // startTemporalDevServer always applies the app's own values (faster task dispatch, eager activities).
    const extra = `; the app's dynamic config${dynamicConfig.length ? ` plus ${dynamicConfig.join(' ')}` : ''}`;
    const storage = inMemory ? 'in-memory SQLite' : `SQLite file as npm start runs it (${SQLITE_PRAGMAS.join(', ')})`;
    return { address: temporal.address, how: `dev server (${storage}, headless${extra})` };
  };

  const bundle = async () => {
    const file = path.join(tmpDir, 'workflow-bundle.js');
    await bundleWorkflows({
      outFile: file,
      catalog: builtInCatalog(),
      // BENCH_WORKFLOWS_PATH: a variant of the workflows to compare (an experiment: a module exporting variant(workflows))
      ...(process.env.BENCH_WORKFLOWS_PATH ? { variant: path.resolve(process.env.BENCH_WORKFLOWS_PATH) } : {}),
      log: { warn: (message: string) => log(message), error: (message: string) => console.error(message) },
    });
    return file;
  };

  const [pg, tmp, bundled] = await Promise.allSettled([startPostgres(), startTemporal(), bundle()]);
  const failures = [pg, tmp, bundled].filter((result) => result.status === 'rejected');
  if (failures.length > 0 || pg.status !== 'fulfilled' || tmp.status !== 'fulfilled' || bundled.status !== 'fulfilled') {
    await stop();
    throw new Error(
      `Benchmark services could not start:\n${failures.map((f) => `  ${(f.reason as Error)?.message ?? f.reason}`).join('\n')}`,
    );
  }
  return {
    databaseUrl: pg.value.url,
    temporalAddress: tmp.value.address,
    bundlePath: bundled.value,
    describe: { postgres: pg.value.how, temporal: tmp.value.how },
    startupMs: performance.now() - started,
    stop,
  };
}
