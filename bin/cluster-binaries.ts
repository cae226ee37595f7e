// Makes sure the cluster shape's binaries (the Temporal server, its SQL tool, the Web UI server) and the
// server's PostgreSQL schema are in the cache, building them with Go when missing. CI runs this before the
// tests so that a first-time build (minutes) is not counted against a test's time limit.
import { ensureClusterBinaries } from '../stack/temporal-server-binary.ts';

try {
  const started = Date.now();
  const binaries = await ensureClusterBinaries({ log: (line) => console.error(line) });
  console.error(`cluster binaries ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(JSON.stringify(binaries));
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
