// A whole Brigade (worker + API) on the run's shared Temporal dev server and a fresh database, for
// tests that go through HTTP as a client would.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type pg from 'pg';
import { withClient } from '../../src/db/with-client.ts';
import { createApp } from '../../src/api/app.ts';
import type { ServerCatalog } from '../../src/api/agent-server.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { temporalCheck } from '../../src/api/health.ts';
import { type Config, type TokenGrant, loadConfig } from '../../src/config.ts';
import { createPool } from '../../src/db/pool.ts';
import type { ChatModel } from '../../src/model/types.ts';
import { createWorker } from '../../stack/worker.ts';
import { dataConverter, payloadCodec } from '../../src/protection/data-converter.ts';
import type { PayloadCodec } from '@temporalio/common';
import { clientInterceptors } from '../../src/telemetry/temporal.ts';
import { freshDatabase, temporalAddress, uniqueTaskQueue, workflowBundlePath } from './harness.ts';
import { listen } from '../../src/api/listen.ts';

// Activity retries and ignored signals log warnings by design; tests assert on them instead.
Runtime.install({ logger: new DefaultLogger(process.env.BRIGADE_TEST_DEBUG ? 'DEBUG' : 'ERROR') });

export const TOKENS: Record<string, TokenGrant> = {
  'token-alice-support-0000000000': { user: 'alice', roles: ['support'] },
  'token-bob-plain-000000000000000': { user: 'bob', roles: [] },
  'token-carol-support-00000000000': { user: 'carol', roles: ['support'] },
  // the beer agent: a bar's token (its client), beer staff (no client, may name one), a bar that is not a client
  'token-gus-great-lakes-0000000000': { user: 'gus', roles: [], client: 'CLT-XLX836' },
  'token-erin-beer-staff-0000000000': { user: 'erin', roles: ['beer-staff'] },
  'token-hal-unknown-bar-0000000000': { user: 'hal', roles: [], client: 'CLT-NOSUCH' },
  // an operator: the codec server, erasing a given user's data
  'token-olga-operator-000000000000': { user: 'olga', roles: ['operator'] },
};
export const ALICE = 'token-alice-support-0000000000';
export const BOB = 'token-bob-plain-000000000000000';
export const CAROL = 'token-carol-support-00000000000';
export const GUS_GREAT_LAKES = 'token-gus-great-lakes-0000000000';
export const ERIN_BEER_STAFF = 'token-erin-beer-staff-0000000000';
export const HAL_UNKNOWN_BAR = 'token-hal-unknown-bar-0000000000';
export const OLGA_OPERATOR = 'token-olga-operator-000000000000';

/** The Express API on a free loopback port with the test tokens, as `npm start` serves it. */
export async function serveApi(deps: {
  catalog: ServerCatalog;
  config: Config;
  client: Client;
  pool: pg.Pool;
  connection: Connection;
  port?: number;
  codec?: PayloadCodec;
  tokens?: Record<string, TokenGrant>;
}): Promise<{ server: Server; baseUrl: string }> {
  const app = createApp({
    catalog: deps.catalog,
    config: deps.config,
    client: deps.client,
    pool: deps.pool,
    tokens: { ...TOKENS, ...deps.tokens },
    checkTemporal: temporalCheck(deps.connection),
    log: () => undefined,
    codec: deps.codec,
  });
  // the server the API runs on in production: its keep-alive and header timeouts too
  const server: Server = await listen(app, deps.port ?? 0, '127.0.0.1');
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface TestApp {
  baseUrl: string;
  /** the agents its API and worker serve */
  catalog: ServerCatalog;
  config: Config;
  client: Client;
  pool: pg.Pool;
  adminUrl: string;
  databaseUrl: string;
  taskQueue: string;
  /** starts a worker in this process (the default) */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** one query as the login that owns the schema (fixtures and checks the app's role may not do) */
  adminQuery<Row extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<Row[]>;
  stop(): Promise<void>;
}

export async function startTestApp(
  options: {
    env?: Record<string, string>;
    model?: ChatModel;
    worker?: boolean;
    /** serve the API on this port (and tell the config, so absolute URLs such as local images point at it) */
    apiPort?: number;
    /** tokens besides TOKENS (a user no other test file has, where Temporal's shared server is searched by user) */
    tokens?: Record<string, TokenGrant>;
    /** the agents the API and the worker serve (default: the built-in ones); another needs its own workflowBundlePath */
    catalog?: ServerCatalog;
    /** another workflow bundle than the suite's (one bundled from another catalog) */
    workflowBundlePath?: string;
  } = {},
): Promise<TestApp> {
  const database = await freshDatabase();
  const taskQueue = uniqueTaskQueue('test');
  const catalog = options.catalog ?? builtInCatalog();
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...(options.apiPort ? { PORT: String(options.apiPort) } : {}),
      // Off unless a test gives keys: many tests read histories raw, and replay.test.ts records them unencrypted.
      ...(options.env?.PAYLOAD_ENCRYPTION_KEYS ? {} : { PAYLOAD_ENCRYPTION: 'off' }),
      ...options.env,
    },
    catalog,
  );
  const pool = createPool(database.url);
  // As npm start does (bin/start.ts): an idle connection the server drops (the database dropped at stop, with
  // a background write still settling) must not crash the test process.
  pool.on('error', () => undefined);
  const connection = await Connection.connect({ address: temporalAddress() });
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    interceptors: clientInterceptors(),
    dataConverter: dataConverter(config, pool),
  });
  const { server, baseUrl } = await serveApi({
    catalog,
    config,
    client,
    pool,
    connection,
    port: options.apiPort,
    codec: payloadCodec(config, pool),
    tokens: options.tokens,
  });

  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;

  const testApp: TestApp = {
    baseUrl,
    catalog,
    config,
    client,
    pool,
    adminUrl: database.adminUrl,
    databaseUrl: database.url,
    taskQueue,
    async startWorker() {
      workerConnection ??= await NativeConnection.connect({ address: temporalAddress() });
      worker = await createWorker({
        catalog,
        config,
        connection: workerConnection,
        pool,
        workflowBundlePath: options.workflowBundlePath ?? workflowBundlePath(),
        model: options.model,
        client,
      });
      running = worker.run();
    },
    async stopWorker() {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      worker = undefined;
    },
    async adminQuery(text, values = []) {
      return withClient(database.adminUrl, async (admin) => (await admin.query(text, values)).rows);
    },
    async call(method, path, { token = ALICE, body, headers = {} } = {}) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // SSE and other text bodies stay text
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async stop() {
      await testApp.stopWorker();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await workerConnection?.close();
      await connection.close();
      await pool.end();
      await database.drop();
    },
  };
  if (options.worker !== false) await testApp.startWorker();
  return testApp;
}
