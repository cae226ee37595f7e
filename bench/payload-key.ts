// The benches run as production does, payloads encrypted (docs/security.md): one random key per bench process,
// given to its in-process worker and client and to the cluster's processes alike.
import { randomBytes } from 'node:crypto';

export const BENCH_PAYLOAD_ENV = {
  PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ bench: randomBytes(32).toString('base64') }),
  PAYLOAD_ENCRYPTION_KEY_ID: 'bench',
};
