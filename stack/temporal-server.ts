import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import type pg from 'pg';
import { withClient } from '../src/db/with-client.ts';
import { ManagedProcess, pollUntil } from './cluster-process.ts';
import { ensureSearchAttributes } from './search-attributes.ts';

// The Temporal server of the cluster shape: the real server binary (all four services in one process, as
// temporalio/auto-setup runs it in docker-compose.yml) on PostgreSQL, with its schema set up and updated by
// its own SQL tool, several history shards, and the default namespace and Brigade's search attributes.

const execFileAsync = promisify(execFile);
const HOST = '127.0.0.1';

export interface TemporalServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

export interface TemporalServerOptions {
  binary: string;
  /** where its config is written */
  dir: string;
  /** a superuser URL of the PostgreSQL server; the databases below are created in it */
  postgresUrl: string;
  databases: { main: string; visibility: string };
  ports: TemporalServerPorts;
  historyShards: number;
  namespace: string;
  log?: (line: string) => void;
  onUnexpectedExit?: (reason: string) => void;
}

/**
 * The same values as the dev server's flags (temporal-dev-server.ts), so that the bench compares topologies,
 * not tunings; plus what SQL visibility needs for search attributes added at run time.
 */
export const CLUSTER_DYNAMIC_CONFIG: Record<string, unknown> = {
  'history.transferProcessorMaxPollRPS': 2000,
  'system.enableActivityEagerExecution': true,
  'system.forceSearchAttributesCacheRefreshOnRead': true,
  'frontend.enableUpdateWorkflowExecution': true,
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
};

/** Creates the server's two databases when missing, then sets up (first time) and updates their schemas. */
export async function setupTemporalSchema(opts: {
  sqlTool: string;
  schemaDir: string;
  postgresUrl: string;
  databases: { main: string; visibility: string };
  log?: (line: string) => void;
}): Promise<{ created: string[] }> {
  const url = new URL(opts.postgresUrl);
  const created: string[] = [];
  for (const [kind, database] of [
    ['temporal', opts.databases.main],
    ['visibility', opts.databases.visibility],
  ] as const) {
    if (await createDatabaseIfMissing(opts.postgresUrl, database)) created.push(database);
    const env = {
      ...process.env,
      SQL_PLUGIN: 'postgres12',
      SQL_HOST: url.hostname,
      SQL_PORT: url.port || '5432',
      SQL_USER: decodeURIComponent(url.username),
      // in the environment, not argv, so that `ps` does not show it
      SQL_PASSWORD: decodeURIComponent(url.password),
      SQL_DATABASE: database,
    };
    const tool = async (args: string[]) => {
      try {
        // Its output is every statement it runs: kept only for a failure.
        await execFileAsync(opts.sqlTool, ['--plugin', 'postgres12', '--quiet', ...args], { env, maxBuffer: 50_000_000 });
      } catch (error) {
        const output = String((error as { stderr?: string }).stderr ?? '') + String((error as { stdout?: string }).stdout ?? '');
        throw new Error(
          `temporal-sql-tool ${args.join(' ')} on database ${database} failed: ${output.trim().split('\n').slice(-3).join(' ') || (error as Error).message}`,
        );
      }
    };
    // setup-schema would reset the recorded version of a database that has one; only a new one gets it.
    if (!(await hasSchemaVersion(opts.postgresUrl, database))) await tool(['setup-schema', '-v', '0.0']);
    await tool(['update-schema', '-d', path.join(opts.schemaDir, kind, 'versioned')]);
  }
  return { created };
}

function withDatabase<T>(postgresUrl: string, database: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(postgresUrl);
  url.pathname = `/${database}`;
  return withClient(url.toString(), fn);
}

async function createDatabaseIfMissing(postgresUrl: string, database: string): Promise<boolean> {
  return withDatabase(postgresUrl, 'postgres', async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === '42P04') return false; // created meanwhile
      throw error;
    }
  });
}

async function hasSchemaVersion(postgresUrl: string, database: string): Promise<boolean> {
  return withDatabase(postgresUrl, database, async (client) => {
    const { rows } = await client.query(`SELECT to_regclass('public.schema_version') IS NOT NULL AS present`);
    if (!rows[0].present) return false;
    const version = await client.query('SELECT curr_version FROM schema_version LIMIT 1');
    return version.rowCount === 1;
  });
}

/** The server's static config (YAML is a superset of JSON: every string is written as a JSON string). */
export function temporalServerConfig(
  opts: Omit<TemporalServerOptions, 'binary' | 'log' | 'onUnexpectedExit'> & { dynamicConfigFile: string },
): string {
  const url = new URL(opts.postgresUrl);
  const q = (value: string | number) => JSON.stringify(String(value));
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: "postgres12"
        databaseName: ${q(database)}
        connectAddr: ${q(`${url.hostname}:${url.port || 5432}`)}
        connectProtocol: "tcp"
        user: ${q(decodeURIComponent(url.username))}
        password: ${q(decodeURIComponent(url.password))}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  const p = opts.ports;
  return `# Written by Brigade's cluster shape (stack/temporal-server.ts) at every start; edits are lost.
log:
  stdout: true
  level: "warn"
persistence:
  defaultStore: "default"
  visibilityStore: "visibility"
  numHistoryShards: ${opts.historyShards}
  datastores:
    default:${store(opts.databases.main, 10)}
    visibility:${store(opts.databases.visibility, 4)}
global:
  membership:
    maxJoinDuration: "30s"
    broadcastAddress: ${q(HOST)}
services:
  frontend:${service(p.frontend, p.frontendMembership, p.frontendHttp)}
  history:${service(p.history, p.historyMembership)}
  matching:${service(p.matching, p.matchingMembership)}
  worker:${service(p.worker, p.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: ${q(`${HOST}:${p.frontend}`)}
dcRedirectionPolicy:
  policy: "noop"
archival:
  history:
    state: "disabled"
  visibility:
    state: "disabled"
namespaceDefaults:
  archival:
    history:
      state: "disabled"
    visibility:
      state: "disabled"
dynamicConfigClient:
  filepath: ${q(opts.dynamicConfigFile)}
  pollInterval: "10s"
`;
}

export function dynamicConfigYaml(values: Record<string, unknown> = CLUSTER_DYNAMIC_CONFIG): string {
  return Object.entries(values)
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n    constraints: {}\n`)
    .join('');
}

/** Writes the config and returns the server as a process that the cluster starts, stops, and drills kill. */
export async function temporalServerProcess(opts: TemporalServerOptions): Promise<ManagedProcess> {
  const configDir = path.join(opts.dir, 'config');
  await fs.mkdir(configDir, { recursive: true });
  const dynamicConfigFile = path.join(opts.dir, 'dynamicconfig.yaml');
  await fs.writeFile(dynamicConfigFile, dynamicConfigYaml());
  // mode 600: it holds the database password
  await fs.writeFile(path.join(configDir, 'cluster.yaml'), temporalServerConfig({ ...opts, dynamicConfigFile }), { mode: 0o600 });
  const address = `${HOST}:${opts.ports.frontend}`;
  return new ManagedProcess({
    name: 'temporal-server',
    command: opts.binary,
    args: ['--root', opts.dir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    log: opts.log,
    onUnexpectedExit: opts.onUnexpectedExit,
    startTimeoutMs: 90_000,
    stopTimeoutMs: 20_000,
    ready: ({ exited }) =>
      pollUntil(
        async () => {
          if (exited()) return false;
          const connection = await Connection.connect({ address, connectTimeout: 1_000 });
          try {
            await connection.workflowService.getSystemInfo({});
            return true;
          } finally {
            await connection.close();
          }
        },
        { timeoutMs: 90_000, what: `the Temporal server on ${address}` },
      ),
  });
}

const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

/**
 * Registers the namespace when missing (the server, unlike the dev server, starts with none), waits until the
 * frontend serves it, then registers the search attributes; all idempotent, so every start runs it.
 */
export async function ensureNamespace(
  address: string,
  namespace: string,
  opts: { retentionDays?: number; log?: (line: string) => void } = {},
): Promise<{ created: boolean; addedAttributes: string[] }> {
  const connection = await Connection.connect({ address });
  try {
    let created = false;
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch (error) {
      if ((error as { code?: number }).code !== GRPC_NOT_FOUND) throw error;
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs(`${opts.retentionDays ?? 3} days`),
        });
        created = true;
        opts.log?.(`temporal: registered namespace ${namespace}`);
      } catch (registerError) {
        if ((registerError as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw registerError;
      }
    }
    // The frontend learns of a new namespace from its cache, refreshed every few seconds.
    await pollUntil(
      async () => {
        await connection.workflowService.countWorkflowExecutions({ namespace, query: '' });
        return true;
      },
      { timeoutMs: 30_000, what: `namespace ${namespace}` },
    );
    const { added } = await ensureSearchAttributes(connection, namespace);
    return { created, addedAttributes: added };
  } finally {
    await connection.close();
  }
}
