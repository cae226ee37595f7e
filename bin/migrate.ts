// `npm run migrate`: applies db/migrations to DATABASE_URL. (npm start and the worker migrate by themselves.)
import { checkPostgres, redactDatabaseUrl } from '../stack/connect.ts';
import { requireSettings, runMain } from '../stack/lifecycle.ts';
import { migrate } from '../src/db/migrate.ts';

runMain(async ({ config, log }) => {
  requireSettings(config, ['DATABASE_URL'], 'npm run migrate');
  await checkPostgres(config.DATABASE_URL);
  const { applied } = await migrate(config.DATABASE_URL, { log: log.info });
  const where = redactDatabaseUrl(config.DATABASE_URL);
  log.info(applied.length > 0 ? `Applied ${applied.length} migration(s) to ${where}.` : `${where} is up to date.`);
  process.exit(0);
});
