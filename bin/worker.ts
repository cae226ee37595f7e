// `npm run worker`: the Temporal worker alone, against DATABASE_URL and TEMPORAL_ADDRESS.
// It migrates first (serialised by an advisory lock), so it can be the first thing deployed.
import { builtInCatalog } from '../src/agents/catalog.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { dataConverter, keyProvider } from '../src/protection/data-converter.ts';
import { checkPostgres, connectTemporal, redactDatabaseUrl } from '../stack/connect.ts';
import { requireSettings, runMain } from '../stack/lifecycle.ts';
import { ensureSearchAttributes } from '../stack/search-attributes.ts';
import { runWorker } from '../stack/run-worker.ts';
import { WORKER_POOL_SIZE } from '../stack/worker.ts';

// a composition root: the agents this process serves, passed down as a value
const catalog = builtInCatalog();

runMain(catalog, async ({ config, log, onStop, fail }) => {
  requireSettings(config, ['DATABASE_URL', 'TEMPORAL_ADDRESS'], 'npm run worker');
  // payload encryption's keys (docs/security.md): production settings without them stop the start here
  keyProvider(config);
  await checkPostgres(config.DATABASE_URL);
  const { applied } = await migrate(config.DATABASE_URL, { agents: catalog.servers, log: log.debug });
  if (applied.length > 0) log.info(`Applied migrations: ${applied.join(', ')}`);

  const pool = createPool(config.DATABASE_URL, { max: WORKER_POOL_SIZE });
  pool.on('error', (error) => log.warn(`PostgreSQL connection lost: ${error.message}`));
  onStop('PostgreSQL pool', () => pool.end());
  // the pool finds persons' data keys (src/protection/person-keys.ts)
  const { connection, client } = await connectTemporal(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, {
    dataConverter: dataConverter(config, pool),
  });
  onStop('Temporal client connection', () => connection.close());
  const { added } = await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
  if (added.length > 0) log.info(`Registered Temporal search attributes: ${added.join(', ')}`);

  await runWorker(catalog, config, config.TEMPORAL_ADDRESS, pool, { onStop, fail }, { client, log: log.info });
  log.info(
    `Brigade worker is polling task queue "${config.TEMPORAL_TASK_QUEUE}" on ${config.TEMPORAL_ADDRESS} ` +
      `(namespace ${config.TEMPORAL_NAMESPACE}; database ${redactDatabaseUrl(config.DATABASE_URL)}).`,
  );
});
