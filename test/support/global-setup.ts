// Starts the services every test file shares, once per `npm test` run: PostgreSQL (with a migrated
// template database that each test clones), the Temporal dev server, and the workflow bundle.
// Test files run in their own processes and find them through the BRIGADE_TEST_* variables.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';
import { bundleWorkflows as bundle } from '../../stack/bundle-workflows.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../stack/embedded-postgres.ts';
import { freePort } from '../../stack/ports.ts';
import { SEARCH_ATTRIBUTES } from '../../stack/search-attributes.ts';
import { findTemporalBinary } from '../../stack/temporal-binary.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../../stack/temporal-dev-server.ts';

export const TEMPLATE_DATABASE = 'brigade_template';

let tmpDir: string | undefined;
let postgres: EmbeddedPostgres | undefined;
let temporal: TemporalDevServer | undefined;
let temporalBinary: string | undefined;

// Quiet unless asked: a failing start throws with the reason anyway.
const log = process.env.BRIGADE_TEST_DEBUG ? (line: string) => console.error(`[test services] ${line}`) : () => undefined;

export async function globalSetup() {
  const started = Date.now();
  tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-test-'));
  // As root, PostgreSQL runs as the `postgres` user, who must be able to enter this directory.
  await fs.chmod(tmpDir, 0o755);

  const [pgResult, temporalResult, bundleResult] = await Promise.allSettled([
    startPostgres(tmpDir),
    startTemporal(),
    bundleWorkflows(tmpDir),
  ]);
  if (pgResult.status === 'fulfilled') postgres = pgResult.value.server;
  if (temporalResult.status === 'fulfilled') temporal = temporalResult.value;
  const failures = [pgResult, temporalResult, bundleResult].filter((r) => r.status === 'rejected');
  if (failures.length > 0) {
    await globalTeardown();
    throw new Error(`Test services could not start:\n${failures.map((f) => `  ${(f.reason as Error)?.message ?? f.reason}`).join('\n')}`);
  }

  process.env.BRIGADE_TEST_PG_ADMIN_URL = (pgResult as PromiseFulfilledResult<{ adminUrl: string }>).value.adminUrl;
  process.env.BRIGADE_TEST_TEMPORAL_ADDRESS = temporal!.address;
  process.env.BRIGADE_TEST_BUNDLE_PATH = (bundleResult as PromiseFulfilledResult<string>).value;
  process.env.BRIGADE_TEST_TEMPORAL_CLI_PATH = temporalBinary!;
  log(`ready in ${Date.now() - started} ms`);
}

export async function globalTeardown() {
  await Promise.allSettled([postgres?.stop(), temporal?.stop()]);
  postgres = undefined;
  temporal = undefined;
  if (tmpDir) await fs.rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
  tmpDir = undefined;
}

async function startPostgres(dir: string): Promise<{ server: EmbeddedPostgres; adminUrl: string }> {
  const server = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    port: await freePort(),
    database: 'postgres',
    ephemeral: true,
    log,
  });
  try {
    const templateUrl = withDatabase(server.url, TEMPLATE_DATABASE);
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
      await migrate(templateUrl, { log });
      // No connections to the template from now on: one would make every CREATE DATABASE ... TEMPLATE fail.
      await admin.query(`ALTER DATABASE ${TEMPLATE_DATABASE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    } finally {
      await admin.end();
    }
    return { server, adminUrl: server.url };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function startTemporal(): Promise<TemporalDevServer> {
  temporalBinary = await findTemporalBinary({ cliPath: process.env.TEMPORAL_CLI_PATH || undefined, log });
  return startTemporalDevServer({
    binary: temporalBinary,
    port: await freePort(),
    uiPort: 0,
    headless: true,
    namespace: 'default',
    searchAttributes: SEARCH_ATTRIBUTES,
    log,
  });
}

async function bundleWorkflows(dir: string): Promise<string> {
  const file = path.join(dir, 'workflow-bundle.js');
  await bundle({ outFile: file, log: quietLogger() });
  return file;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

function quietLogger() {
  return { warn: (message: string) => log(message), error: (message: string) => console.error(message) };
}
