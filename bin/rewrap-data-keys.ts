// `npm run rewrap-data-keys`: after PAYLOAD_ENCRYPTION_KEY_ID names a new deployment key, wraps every person's data
// key with it (src/protection/person-keys.ts rewrapDataKeys). Payloads stay as they are; once this has run, no
// data key needs the old deployment key (payloads without an owner may still: docs/security.md#key-rotation).
import { builtInCatalog } from '../src/agents/catalog.ts';
import { createPool } from '../src/db/pool.ts';
import { keyProvider } from '../src/protection/data-converter.ts';
import { rewrapDataKeys } from '../src/protection/person-keys.ts';
import { checkPostgres } from '../stack/connect.ts';
import { requireSettings, runMain } from '../stack/lifecycle.ts';

const catalog = builtInCatalog();

runMain(catalog, async ({ config, log }) => {
  requireSettings(config, ['DATABASE_URL'], 'npm run rewrap-data-keys');
  const keys = keyProvider(config);
  if (!keys) throw new Error('npm run rewrap-data-keys needs PAYLOAD_ENCRYPTION_KEYS (encryption is off)');
  await checkPostgres(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, { max: 2 });
  try {
    const { rewrapped } = await rewrapDataKeys(pool, keys);
    log.info(`Re-wrapped ${rewrapped} data key(s) with "${keys.currentKeyId()}".`);
  } finally {
    await pool.end();
  }
  process.exit(0);
});
