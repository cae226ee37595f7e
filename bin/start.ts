// `npm start`: the whole of Brigade in one process. Without DATABASE_URL it runs an embedded
// PostgreSQL, without TEMPORAL_ADDRESS a Temporal dev server with its Web UI; data under DATA_DIR.
import { builtInCatalog } from '../src/agents/catalog.ts';
import path from 'node:path';
import { createApp } from '../src/api/app.ts';
import { temporalCheck } from '../src/api/health.ts';
import { closeServer, listen } from '../src/api/listen.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { dataConverter, payloadCodec, withDevPayloadKey } from '../src/protection/data-converter.ts';
import { checkPostgres, connectTemporal } from '../stack/connect.ts';
import { loadOrCreateDevToken } from '../stack/dev-token.ts';
import { runMain } from '../stack/lifecycle.ts';
import { startEmbeddedPostgres } from '../stack/embedded-postgres.ts';
import { SEARCH_ATTRIBUTES, ensureSearchAttributes } from '../stack/search-attributes.ts';
import { findTemporalBinary } from '../stack/temporal-binary.ts';
import { startTemporalDevServer } from '../stack/temporal-dev-server.ts';
import { privateDataDir } from '../stack/private-data.ts';
import { reclaimDataDir, releaseDataDir, temporalPidFile } from '../stack/leftovers.ts';
import { runWorker } from '../stack/run-worker.ts';
import { WORKER_POOL_SIZE } from '../stack/worker.ts';
import { namespaceRetentionMs, setNamespaceRetention } from '../src/protection/retention.ts';
import { ensureWebBuild } from '../stack/web-build.ts';

// a composition root: the agents this process serves, passed down as a value
const catalog = builtInCatalog();

runMain(catalog, async ({ config: settings, log, onStop, fail }) => {
  const started = Date.now();
  const dataDir = path.resolve(settings.DATA_DIR);
  // nothing under DATA_DIR for other accounts: history file, objects, token, keys, passwords (stack/private-data.ts)
  await privateDataDir(dataDir);
  const dbFile = path.join(dataDir, 'temporal.db');
  // a crash (kill -9 of this process group) leaves PostgreSQL and the dev server running: stop them before starting
  for (const service of await reclaimDataDir(dataDir, dbFile)) log.info(`Stopped ${service}, left running by an earlier start`);
  onStop('DATA_DIR', () => releaseDataDir(dataDir));
  // nothing configured: a dev key (kept outside DATA_DIR), so the dev server's history is encrypted too
  const config = await withDevPayloadKey(settings, dataDir);

  let databaseUrl = config.DATABASE_URL;
  if (databaseUrl) {
    await checkPostgres(databaseUrl);
  } else {
    log.info(`Starting PostgreSQL (embedded, data in ${path.join(dataDir, 'postgres')})...`);
    const postgres = await startEmbeddedPostgres({
      dataDir,
      port: config.EMBEDDED_PG_PORT,
      log: log.debug,
      onUnexpectedExit: (reason) => log.error(`${reason}; /readyz reports it; restart Brigade to start it again`),
    });
    onStop('PostgreSQL', postgres.stop);
    databaseUrl = postgres.localUrl;
  }
  const { applied } = await migrate(databaseUrl, { agents: catalog.servers, log: log.debug });
  if (applied.length > 0) log.info(`Applied migrations: ${applied.join(', ')}`);

  let temporalAddress = config.TEMPORAL_ADDRESS;
  let startedTemporal = false;
  let uiUrl = config.TEMPORAL_UI_URL;
  if (!temporalAddress) {
    const binary = await findTemporalBinary({ cliPath: config.TEMPORAL_CLI_PATH, log: log.info });
    log.info(`Starting the Temporal dev server (history in ${dbFile})...`);
    const server = await startTemporalDevServer({
      binary,
      port: config.TEMPORAL_DEV_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
      dbFile,
      pidFile: temporalPidFile(dataDir),
      namespace: config.TEMPORAL_NAMESPACE,
      searchAttributes: SEARCH_ATTRIBUTES,
      log: log.debug,
      onUnexpectedExit: (reason) => log.error(`${reason}; /readyz reports it; restart Brigade to start it again`),
    });
    onStop('Temporal dev server', server.stop);
    temporalAddress = server.address;
    startedTemporal = true;
    uiUrl ??= server.uiUrl;
  }

  // Separate pools, so that busy activities cannot starve API requests of connections.
  const workerPool = createPool(databaseUrl, { max: WORKER_POOL_SIZE });
  const apiPool = createPool(databaseUrl);
  for (const pool of [workerPool, apiPool]) {
    // An idle connection dropped by the server (a PostgreSQL restart) must not crash the process.
    pool.on('error', (error) => log.warn(`PostgreSQL connection lost: ${error.message}`));
    onStop('PostgreSQL pool', () => pool.end());
  }

  // the API's pool finds persons' data keys: what it starts for a person is sealed under theirs
  const { connection, client } = await connectTemporal(temporalAddress, config.TEMPORAL_NAMESPACE, {
    dataConverter: dataConverter(config, apiPool),
  });
  onStop('Temporal client connection', () => connection.close());
  const { added } = await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
  if (added.length > 0) log.info(`Registered Temporal search attributes: ${added.join(', ')}`);
  // the namespace is Brigade's when it started the dev server: closed executions go when conversations do
  const retention = namespaceRetentionMs(config);
  if (startedTemporal && retention) await setNamespaceRetention(connection, config.TEMPORAL_NAMESPACE, retention);

  // One worker that restarts with the code: versioned, current from its start, and conversations move with it
  // (auto-upgrade), since the old version's worker is gone once the process restarts. The cluster pins instead.
  const workerConfig = {
    ...config,
    WORKER_DEPLOYMENT_NAME: config.WORKER_DEPLOYMENT_NAME ?? 'brigade',
    WORKER_VERSIONING_BEHAVIOR: process.env.WORKER_VERSIONING_BEHAVIOR ? config.WORKER_VERSIONING_BEHAVIOR : ('auto-upgrade' as const),
    WORKER_SET_CURRENT: process.env.WORKER_SET_CURRENT ? config.WORKER_SET_CURRENT : ('always' as const),
  };
  await runWorker(catalog, workerConfig, temporalAddress, workerPool, { onStop, fail }, { client, log: log.debug });

  // With a provider, people sign in through it: no dev token that would act as anyone with every role.
  const devToken = config.API_TOKENS || config.AUTH_OIDC_ISSUER ? undefined : await loadOrCreateDevToken(dataDir, catalog);
  const tokens = config.API_TOKENS ?? devToken?.tokens ?? {};
  await ensureWebBuild(log.info);
  const app = createApp({
    catalog,
    config,
    client,
    pool: apiPool,
    tokens,
    checkTemporal: temporalCheck(connection),
    temporalUiUrl: uiUrl,
    codec: payloadCodec(config, apiPool),
  });
  const server = await listen(app, config.PORT, config.HOST);
  onStop('API', () => closeServer(server));

  const apiUrl = `http://${displayHost(config.HOST)}:${config.PORT}`;
  log.info('');
  log.info(`Brigade is running (started in ${((Date.now() - started) / 1000).toFixed(1)} s).`);
  log.info(`  Web app:         ${apiUrl}/`);
  log.info(`  API:             ${apiUrl}  (OpenAPI document: ${apiUrl}/openapi.json)`);
  log.info(`  Temporal Web UI: ${uiUrl ?? `(not known: set TEMPORAL_UI_URL for the cluster at ${temporalAddress})`}`);
  const tokenFile = path.join(dataDir, 'dev-token');
  // Only the all-embedded dev mode prints the token: once a real database or Temporal is configured, the
  // log may be collected elsewhere, and a bearer token there would outlive the terminal it was meant for.
  if (devToken && !config.DATABASE_URL && !config.TEMPORAL_ADDRESS) {
    log.info(`  Dev token:       ${devToken.token}  (user "dev"; kept in ${tokenFile})`);
    // The fragment never reaches the server; the app keeps the token in session storage and clears it.
    log.info(`  Sign in as dev:  ${apiUrl}/#token=${devToken.token}`);
    log.info(`  Try:             curl -H "Authorization: Bearer ${devToken.token}" ${apiUrl}/v1/conversations`);
  } else if (devToken) {
    log.info(`  Dev token:       in ${tokenFile} (user "dev"; set API_TOKENS for real users)`);
  }
  if (config.AUTH_OIDC_ISSUER)
    log.info(
      `  Sign-in:         through ${config.AUTH_OIDC_ISSUER}${config.AUTH_OIDC_CLIENT_ID ? '' : ' (access tokens only: set AUTH_OIDC_CLIENT_ID for the web client)'}`,
    );
  log.info('Press Ctrl-C to stop.');
});

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
