// Makes sure the Temporal CLI is available (finds, builds or downloads it) and prints its path.
// CI runs this before the tests so a first-time Go build is not counted against a test timeout.
import { findTemporalBinary } from '../stack/temporal-binary.ts';

try {
  const binary = await findTemporalBinary({ cliPath: process.env.TEMPORAL_CLI_PATH || undefined, log: (line) => console.error(line) });
  console.log(binary);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
