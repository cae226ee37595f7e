// `npm run replay-gate [-- --bundle <file>] [--live <n>] [--histories <dir>]`: replays the recorded histories
// and, with TEMPORAL_ADDRESS set, a sample of live ones against the new bundle; exits 1 on any
// nondeterminism, so a deploy script stops before the new workers start. docs/operations.md#upgrades.
import { builtInCatalog } from '../src/agents/catalog.ts';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs/promises';
import { bundleWorkflows } from '../stack/bundle-workflows.ts';
import { connectTemporal } from '../stack/connect.ts';
import { type GateHistory, liveHistories, recordedHistories, replayAll } from '../stack/replay-gate.ts';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { createPool } from '../src/db/pool.ts';
import { dataConverter } from '../src/protection/data-converter.ts';

// Each replay starts and stops a worker; its state changes are not news here.
Runtime.install({ logger: new DefaultLogger('WARN') });

const { values } = parseArgs({
  options: {
    bundle: { type: 'string' },
    live: { type: 'string', default: '200' },
    histories: { type: 'string', default: fileURLToPath(new URL('../test/histories', import.meta.url)) },
  },
});

let bundle = values.bundle ?? process.env.WORKFLOW_BUNDLE_PATH;
if (!bundle) {
  bundle = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-gate-')), 'workflows.js');
  await bundleWorkflows({ outFile: bundle, catalog: builtInCatalog() });
}

// The workers' keys (PAYLOAD_ENCRYPTION_KEYS): live histories and their listings are encrypted, a person's
// payloads under their data key, found in DATABASE_URL's database.
const config = loadConfig();
const pool = config.DATABASE_URL ? createPool(config.DATABASE_URL, { max: 2 }) : undefined;
const converter = dataConverter(config, pool);
const histories: GateHistory[] = await recordedHistories(values.histories);
console.log(`replay gate: ${histories.length} recorded histories from ${values.histories}`);
const address = process.env.TEMPORAL_ADDRESS;
const limit = Number(values.live);
if (address && limit > 0) {
  const { client, connection } = await connectTemporal(address, process.env.TEMPORAL_NAMESPACE || 'default', { dataConverter: converter });
  try {
    const live = await liveHistories(client, { limit, taskQueue: process.env.TEMPORAL_TASK_QUEUE || 'brigade' });
    console.log(`replay gate: ${live.length} live histories from ${address}`);
    histories.push(...live);
  } finally {
    await connection.close();
  }
}

const { replayed, failures } = await replayAll(bundle, histories, converter);
await pool?.end();
for (const failure of failures) console.error(`  NOT REPLAYABLE ${failure.source}: ${failure.error.split('\n')[0]}`);
if (failures.length > 0) {
  console.error(
    `replay gate: ${failures.length} of ${replayed} histories do not replay against ${bundle}; do not deploy this code (see docs/operations.md#upgrades)`,
  );
  process.exit(1);
}
console.log(`replay gate: all ${replayed} histories replay against ${bundle}`);
