// `npm run worker`: the Temporal worker alone, against DATABASE_URL and TEMPORAL_ADDRESS.
// It migrates first (serialised by an advisory lock), so it can be the first thing deployed.
import { migrate } from './db/migrate.ts';
import { createPool } from './db/pool.ts';
import { checkPostgres, connectTemporal, connectTemporalWorker, redactDatabaseUrl } from './stack/connect.ts';
import { requireSettings, runMain } from './stack/lifecycle.ts';
import { ensureSearchAttributes } from './stack/search-attributes.ts';
import { installTemporalRuntime } from './stack/temporal-runtime.ts';
import { createWorker } from './worker.ts';

runMain(async ({ config, log, onStop, fail }) => {
  requireSettings(config, ['DATABASE_URL', 'TEMPORAL_ADDRESS'], 'npm run worker');
  await checkPostgres(config.DATABASE_URL);
  const { applied } = await migrate(config.DATABASE_URL, { log: log.debug });
  if (applied.length > 0) log.info(`Applied migrations: ${applied.join(', ')}`);

  const { connection } = await connectTemporal(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE);
  onStop('Temporal client connection', () => connection.close());
  const { added } = await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
  if (added.length > 0) log.info(`Registered Temporal search attributes: ${added.join(', ')}`);

  const pool = createPool(config.DATABASE_URL);
  pool.on('error', (error) => log.warn(`PostgreSQL connection lost: ${error.message}`));
  onStop('PostgreSQL pool', () => pool.end());

  installTemporalRuntime(config.LOG_LEVEL);
  const nativeConnection = await connectTemporalWorker(config.TEMPORAL_ADDRESS);
  onStop('Temporal worker connection', () => nativeConnection.close());
  const worker = await createWorker({ config, connection: nativeConnection, pool });
  const running = worker.run();
  running.then(
    () => fail(new Error('The Temporal worker stopped unexpectedly')),
    (error: unknown) => fail(new Error(`The Temporal worker failed: ${(error as Error).message}`)),
  );
  onStop('Temporal worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
  log.info(
    `Brigade worker is polling task queue "${config.TEMPORAL_TASK_QUEUE}" on ${config.TEMPORAL_ADDRESS} ` +
      `(namespace ${config.TEMPORAL_NAMESPACE}; database ${redactDatabaseUrl(config.DATABASE_URL)}).`,
  );
});
