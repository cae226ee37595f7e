import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { withClient } from '../src/db/with-client.ts';
import { loadOrCreateDevToken } from './dev-token.ts';
import type { ServerCatalog } from '../src/api/agent-server.ts';
import { DEV_KEY_ID, loadOrCreatePayloadKey } from '../src/protection/data-converter.ts';
import { namespaceRetentionMs } from '../src/protection/retention.ts';
import { duration } from '../src/shared/duration.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';
import { ManagedProcess, pollUntil } from './cluster-process.ts';
import { processEnv, sharedEnv } from './cluster-env.ts';
import { freePort, isPortFree } from './ports.ts';
import { ensureClusterBinaries, type ClusterBinaries } from './temporal-server-binary.ts';
import { ensureNamespace, setupTemporalSchema, temporalServerProcess, type TemporalServerPorts } from './temporal-server.ts';
import { uiServerProcess } from './ui-server.ts';

// The production topology of docker-compose.yml from native parts: PostgreSQL (embedded, or DATABASE_URL's
// server), a Temporal server built from source on it, the Web UI server, WORKERS worker processes and the API
// process, each started as compose starts its service and stopped in the reverse order.

const HOST = '127.0.0.1';
const REPO = fileURLToPath(new URL('../', import.meta.url));
const WORKER_MAIN = path.join(REPO, 'bin/worker.ts');
const API_MAIN = path.join(REPO, 'bin/api.ts');
const BUNDLE_MAIN = path.join(REPO, 'bin/bundle-workflows.ts');
/** PostgreSQL serves Temporal's four services and every Brigade process; 100 (the default) is too few. */
const MIN_PG_CONNECTIONS = 300;

export interface ClusterOptions {
  /** the agents its processes serve (the roles the dev token gets, the workflow bundle); the worker and API processes build the same from their entry points */
  catalog: ServerCatalog;
  /** everything the cluster keeps: PostgreSQL's data, configs, the API's dev token, the workflow bundle */
  dataDir: string;
  /** PostgreSQL to use instead of an embedded one: Brigade's database; Temporal's go next to it on that server */
  databaseUrl?: string;
  /** Temporal's databases (default `temporal` and `temporal_visibility`, as in docker-compose.yml) */
  temporalDatabases?: { main: string; visibility: string };
  /** 0 or absent: a free port (chosen once and kept in the data dir, so a restart finds the same ones) */
  ports?: { frontend?: number; ui?: number; api?: number; postgres?: number };
  workers?: number;
  historyShards?: number;
  /** a prebuilt workflow bundle (tests); otherwise bundled into the data dir at every start */
  workflowBundlePath?: string;
  /** embedded PostgreSQL without fsync (tests and drills) */
  ephemeral?: boolean;
  /** added to the worker and API environments, after the shared file (tests, drills: a fake model) */
  env?: Record<string, string>;
  /** restart a worker or the API that dies on its own, as compose's `restart: on-failure` does */
  restartOnFailure?: boolean;
  log?: (line: string) => void;
  /** every line a cluster process prints */
  processLog?: (name: string, line: string) => void;
  binaries?: ClusterBinaries;
}

export interface ClusterPostgres {
  /** the superuser URL of Brigade's database */
  url: string;
  /** only for an embedded PostgreSQL: stop it and start it again on the same data and port (drills) */
  stop?(): Promise<void>;
  start?(): Promise<void>;
}

export interface Cluster {
  apiUrl: string;
  uiUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** the bearer token the API serves when API_TOKENS is not set */
  devToken?: string;
  postgres: ClusterPostgres;
  temporal: ManagedProcess;
  ui: ManagedProcess;
  workers: ManagedProcess[];
  api: ManagedProcess;
  /**
   * Starts one more worker, e.g. a new version beside the old one (the upgrade drill): its environment is the
   * others' with `env` over it (WORKFLOW_BUNDLE_PATH, WORKER_SET_CURRENT). Stopped with the cluster.
   */
  addWorker(name: string, env: Record<string, string>): Promise<ManagedProcess>;
  /** ms each step of the start took */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

interface SavedPorts extends TemporalServerPorts {
  ui: number;
  api: number;
  postgres: number;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const log = opts.log ?? (() => undefined);
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await fn();
    } finally {
      timings[name] = Math.round(performance.now() - started);
    }
  };
  const shared = sharedEnv();
  const namespace = opts.env?.TEMPORAL_NAMESPACE ?? shared.TEMPORAL_NAMESPACE ?? 'default';
  const taskQueue = opts.env?.TEMPORAL_TASK_QUEUE ?? shared.TEMPORAL_TASK_QUEUE ?? 'brigade';
  const stops: { name: string; stop: () => Promise<unknown> }[] = [];
  let stopping = false;
  const stopAll = async () => {
    stopping = true;
    for (const { name, stop } of stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        log(`cluster: stopping ${name} failed: ${(error as Error).message}`);
      }
    }
  };
  const unexpected = (name: string) => (reason: string) => {
    if (!stopping) log(`cluster: ${reason}`);
  };
  const processLog = (name: string) => (line: string) => opts.processLog?.(name, line);

  try {
    const ports = await choosePorts(dataDir, opts.ports ?? {});

    // Go builds (first run), PostgreSQL and the workflow bundle do not depend on each other.
    const [binaries, postgres, bundlePath] = await Promise.all([
      timed('binaries', async () => opts.binaries ?? ensureClusterBinaries({ log })),
      timed('postgres', async () => {
        const started = await startPostgres(opts, dataDir, ports.postgres, log);
        stops.push({ name: 'PostgreSQL', stop: async () => started.stop?.() });
        return started;
      }),
      timed('bundle', async () => opts.workflowBundlePath ?? bundleWorkflows(dataDir)),
    ]);

    const databases = opts.temporalDatabases ?? { main: 'temporal', visibility: 'temporal_visibility' };
    const { created } = await timed('schema', () =>
      setupTemporalSchema({ sqlTool: binaries.sqlTool, schemaDir: binaries.schemaDir, postgresUrl: postgres.url, databases, log }),
    );
    if (created.length) log(`cluster: created Temporal's databases ${created.join(', ')}`);

    const temporal = await temporalServerProcess({
      binary: binaries.server,
      dir: path.join(dataDir, 'temporal'),
      postgresUrl: postgres.url,
      databases,
      ports,
      historyShards: opts.historyShards ?? 4,
      namespace,
      log: processLog('temporal-server'),
      onUnexpectedExit: unexpected('temporal-server'),
    });
    await timed('temporal', () => temporal.start());
    stops.push({ name: 'Temporal server', stop: () => temporal.stop() });
    const temporalAddress = `${HOST}:${ports.frontend}`;
    const { addedAttributes } = await timed('namespace', () =>
      ensureNamespace(temporalAddress, namespace, { log, retentionDays: clusterRetentionDays(opts.env) }),
    );
    if (addedAttributes.length) log(`cluster: registered search attributes ${addedAttributes.join(', ')}`);

    const apiUrl = `http://${HOST}:${ports.api}`;
    const { process: ui, url: uiUrl } = await uiServerProcess({
      binary: binaries.ui,
      dir: path.join(dataDir, 'ui'),
      port: ports.ui,
      temporalAddress,
      namespace,
      corsOrigins: [apiUrl],
      codecEndpoint: `${apiUrl}/codec`,
      log: processLog('temporal-ui'),
      onUnexpectedExit: unexpected('temporal-ui'),
    });

    const appDataDir = path.join(dataDir, 'app');
    const devToken =
      opts.env?.API_TOKENS || process.env.API_TOKENS ? undefined : (await loadOrCreateDevToken(appDataDir, opts.catalog)).token;
    // Without keys of the operator's, one kept in the data dir (as the dev token is): the processes run with
    // production settings, which refuse to start without encryption keys.
    const given = { ...process.env, ...opts.env };
    const keyEnv =
      given.PAYLOAD_ENCRYPTION === 'off' || given.PAYLOAD_ENCRYPTION_KEYS
        ? {}
        : {
            PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ [DEV_KEY_ID]: (await loadOrCreatePayloadKey(appDataDir)).toString('base64') }),
            PAYLOAD_ENCRYPTION_KEY_ID: DEV_KEY_ID,
          };
    const image = { WORKFLOW_BUNDLE_PATH: bundlePath, DATA_DIR: appDataDir, ...keyEnv };
    const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const topology = { DATABASE_URL: postgres.url, TEMPORAL_ADDRESS: temporalAddress };
    const nodeProcess = (
      name: string,
      main: string,
      role: 'worker' | 'api',
      extraTopology: Record<string, string>,
      ready: Readiness,
      env: Record<string, string> = {},
    ) =>
      new ManagedProcess({
        name,
        command: process.execPath,
        args: [main],
        env: { ...base, ...image, ...processEnv(role, { ...topology, ...extraTopology }, { extra: opts.env }), ...env },
        cwd: REPO,
        log: processLog(name),
        onUnexpectedExit: (reason) => {
          if (stopping) return;
          log(`cluster: ${reason}`);
          if (opts.restartOnFailure) restartLater(name, all.get(name)!, log, () => stopping);
        },
        startTimeoutMs: 60_000,
        stopTimeoutMs: 30_000,
        ready: makeReady(ready),
      });
    const all = new Map<string, ManagedProcess>();
    const workers = Array.from({ length: Math.max(1, opts.workers ?? 1) }, (_, i) => {
      const worker = nodeProcess(
        `worker-${i + 1}`,
        WORKER_MAIN,
        'worker',
        {},
        { kind: 'poller', address: temporalAddress, namespace, taskQueue },
      );
      all.set(worker.name, worker);
      return worker;
    });
    const api = nodeProcess(
      'api',
      API_MAIN,
      'api',
      { HOST, PORT: String(ports.api), TEMPORAL_UI_URL: uiUrl },
      { kind: 'http', url: `${apiUrl}/readyz` },
    );
    all.set('api', api);

    await timed('ui+workers', async () => {
      const results = await Promise.allSettled([
        ui.start().then(() => stops.push({ name: 'Web UI', stop: () => ui.stop() })),
        // One worker first: it migrates Brigade's database (the others would wait on its advisory lock anyway).
        (async () => {
          await workers[0]!.start();
          stops.push({ name: workers[0]!.name, stop: () => workers[0]!.stop() });
          await Promise.all(
            workers.slice(1).map(async (worker) => {
              await worker.start();
              stops.push({ name: worker.name, stop: () => worker.stop() });
            }),
          );
        })(),
      ]);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    });
    await timed('api', () => api.start());
    stops.push({ name: 'API', stop: () => api.stop() });

    return {
      apiUrl,
      uiUrl,
      temporalAddress,
      namespace,
      taskQueue,
      devToken,
      postgres,
      temporal,
      ui,
      workers,
      api,
      async addWorker(name, env) {
        const worker = nodeProcess(
          name,
          WORKER_MAIN,
          'worker',
          {},
          { kind: 'poller', address: temporalAddress, namespace, taskQueue },
          env,
        );
        all.set(name, worker);
        await worker.start();
        stops.push({ name, stop: () => worker.stop() });
        workers.push(worker);
        return worker;
      },
      timings,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

type Readiness = { kind: 'poller'; address: string; namespace: string; taskQueue: string } | { kind: 'http'; url: string };

function makeReady(readiness: Readiness) {
  return async ({ exited, pid }: { exited(): boolean; pid: number | undefined }) => {
    // A worker is ready when Temporal lists it among the task queue's pollers (its identity is pid@host),
    // whatever its LOG_LEVEL lets it print.
    const connection = readiness.kind === 'poller' ? await Connection.connect({ address: readiness.address }) : undefined;
    try {
      await pollUntil(
        async () => {
          if (exited()) return false;
          if (readiness.kind === 'poller') {
            const { pollers } = await connection!.workflowService.describeTaskQueue({
              namespace: readiness.namespace,
              taskQueue: { name: readiness.taskQueue, kind: 1 /* NORMAL */ },
              taskQueueType: 1 /* WORKFLOW */,
            });
            return (pollers ?? []).some((poller) => poller.identity?.startsWith(`${pid}@`));
          }
          const response = await fetch(readiness.url);
          if (response.status !== 200) throw new Error(`${readiness.url} answered ${response.status}`);
          return true;
        },
        { timeoutMs: 60_000, what: readiness.kind === 'http' ? readiness.url : `the worker (pid ${pid})`, everyMs: 100 },
      );
    } finally {
      await connection?.close();
    }
  };
}

function restartLater(name: string, proc: ManagedProcess, log: (line: string) => void, stopping: () => boolean) {
  setTimeout(() => {
    if (stopping() || proc.running) return;
    log(`cluster: restarting ${name}`);
    proc.start().catch((error: Error) => log(`cluster: ${name} did not restart: ${error.message}`));
  }, 1_000);
}

async function startPostgres(opts: ClusterOptions, dataDir: string, port: number, log: (line: string) => void): Promise<ClusterPostgres> {
  if (opts.databaseUrl) return { url: opts.databaseUrl };
  let server: EmbeddedPostgres | undefined;
  const start = async () => {
    server = await startEmbeddedPostgres({ dataDir, port, database: 'brigade', ephemeral: opts.ephemeral, log: () => undefined });
  };
  await start();
  if (!opts.ephemeral && (await maxConnections(server!.url)) < MIN_PG_CONNECTIONS) {
    // Written to postgresql.auto.conf; a restart applies it (once, on the first start).
    await withClient(server!.url, (client) => client.query(`ALTER SYSTEM SET max_connections = ${MIN_PG_CONNECTIONS}`));
    log(`cluster: raising PostgreSQL's max_connections to ${MIN_PG_CONNECTIONS} (restarts it once)`);
    await server!.stop();
    await start();
  }
  return {
    url: server!.url,
    stop: async () => {
      await server?.stop();
      server = undefined;
    },
    start,
  };
}

async function maxConnections(url: string): Promise<number> {
  return withClient(url, async (client) => Number((await client.query('SHOW max_connections')).rows[0].max_connections));
}

/** Ports chosen once per data dir: Temporal remembers its members' addresses, and users their bookmarks. */
async function choosePorts(dataDir: string, wanted: NonNullable<ClusterOptions['ports']>): Promise<SavedPorts> {
  const file = path.join(dataDir, 'ports.json');
  let saved: Partial<SavedPorts> = {};
  try {
    saved = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<SavedPorts>;
  } catch {
    // first start
  }
  const names: (keyof SavedPorts)[] = [
    'frontend',
    'frontendHttp',
    'frontendMembership',
    'history',
    'historyMembership',
    'matching',
    'matchingMembership',
    'worker',
    'workerMembership',
    'ui',
    'api',
    'postgres',
  ];
  const chosen = {} as SavedPorts;
  const taken = new Set<number>();
  // freePort stays below 32768, which Temporal's membership also needs: it records members' ports in a smallint column
  for (const name of names) {
    const explicit = (wanted as Record<string, number | undefined>)[name];
    if (explicit) {
      if (!(await isPortFree(explicit))) throw new Error(`port ${explicit} (${name}) is in use`);
      chosen[name] = explicit;
    } else {
      const previous = saved[name];
      chosen[name] = previous && !taken.has(previous) && (await isPortFree(previous)) ? previous : await freePort();
    }
    while (taken.has(chosen[name])) chosen[name] = await freePort();
    taken.add(chosen[name]);
  }
  await fs.writeFile(file, `${JSON.stringify(chosen, null, 2)}\n`);
  return chosen;
}

/** What the Dockerfile does at image build time: workers then start without webpack. */
async function bundleWorkflows(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'workflow-bundle.js');
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, [BUNDLE_MAIN, file], { cwd: REPO }, (error, _stdout, stderr) =>
      error ? reject(new Error(`bundling the workflows failed: ${stderr || error.message}`)) : resolve(),
    ),
  );
  return file;
}

/** The namespace's retention in days when RETENTION_CONVERSATIONS is set for the cluster (at least one). */
function clusterRetentionDays(env: Record<string, string> | undefined): number | undefined {
  const text = env?.RETENTION_CONVERSATIONS ?? process.env.RETENTION_CONVERSATIONS;
  if (!text) return undefined;
  const ms = namespaceRetentionMs({ RETENTION_CONVERSATIONS: duration.parse(text) });
  return ms === undefined ? undefined : Math.ceil(ms / 86_400_000);
}
