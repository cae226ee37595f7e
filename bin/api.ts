// `npm run api`: the HTTP API alone, against DATABASE_URL and TEMPORAL_ADDRESS (run a worker too).
import { builtInCatalog } from '../src/agents/catalog.ts';
import path from 'node:path';
import { createApp } from '../src/api/app.ts';
import { temporalCheck } from '../src/api/health.ts';
import { closeServer, listen } from '../src/api/listen.ts';
import { createPool } from '../src/db/pool.ts';
import { dataConverter, keyProvider, payloadCodec } from '../src/protection/data-converter.ts';
import { checkPostgres, connectTemporal } from '../stack/connect.ts';
import { loadOrCreateDevToken } from '../stack/dev-token.ts';
import { requireSettings, runMain } from '../stack/lifecycle.ts';
import { startMetricsPort } from '../stack/metrics-port.ts';

// a composition root: the agents this process serves, passed down as a value
const catalog = builtInCatalog();

runMain(catalog, async ({ config, log, onStop }) => {
  requireSettings(config, ['DATABASE_URL', 'TEMPORAL_ADDRESS'], 'npm run api');
  // payload encryption's keys (docs/security.md): production settings without them stop the start here
  keyProvider(config);
  await checkPostgres(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL);
  pool.on('error', (error) => log.warn(`PostgreSQL connection lost: ${error.message}`));
  onStop('PostgreSQL pool', () => pool.end());
  // the pool finds persons' data keys: what the API starts for a person is sealed under theirs
  const { connection, client } = await connectTemporal(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, {
    dataConverter: dataConverter(config, pool),
  });
  onStop('Temporal client connection', () => connection.close());

  let tokens = config.API_TOKENS ?? {};
  // With a provider, people sign in through it: no dev token that would act as anyone with every role.
  if (!config.API_TOKENS && !config.AUTH_OIDC_ISSUER) {
    const dataDir = path.resolve(config.DATA_DIR);
    const dev = await loadOrCreateDevToken(dataDir, catalog);
    tokens = dev.tokens;
    log.warn(`API_TOKENS is not set; serving one dev token (user "dev"), kept in ${path.join(dataDir, 'dev-token')}`);
  }

  await startMetricsPort(config, onStop);
  const app = createApp({
    catalog,
    config,
    client,
    pool,
    tokens,
    checkTemporal: temporalCheck(connection),
    codec: payloadCodec(config, pool),
  });
  const server = await listen(app, config.PORT, config.HOST);
  onStop('API', () => closeServer(server));
  log.info(`Brigade API listening on http://${config.HOST}:${config.PORT} (Temporal ${config.TEMPORAL_ADDRESS}).`);
});
