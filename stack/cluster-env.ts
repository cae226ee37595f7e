import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The environment of the worker and API processes in the multi-process shape, defined once: the shared values
// in deploy/brigade.env (which docker-compose.yml reads with env_file), and here the names each topology sets
// itself, because they are addresses (postgresql:5432 in compose, 127.0.0.1:<port> natively) or secrets
// passed through from the operator's environment. test/stack/cluster-env.test.ts holds docker-compose.yml to this.

export const SHARED_ENV_FILE = fileURLToPath(new URL('../deploy/brigade.env', import.meta.url));

export type ClusterRole = 'worker' | 'api';

/** Set by the topology: where the services are, and where this process listens. */
export const TOPOLOGY_VARIABLES: Record<ClusterRole, readonly string[]> = {
  worker: ['DATABASE_URL', 'TEMPORAL_ADDRESS'],
  api: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'HOST', 'PORT', 'TEMPORAL_UI_URL'],
};

/** Passed through from the operator's environment when set (compose: `${NAME:-}`). */
// A secured Temporal (Cloud's API key or mTLS files), traces and metrics, in both processes alike.
const OPERATIONS = [
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
  'METRICS_PORT',
  'METRICS_HOST',
  'OTEL_SERVICE_NAME',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  // payload encryption (docs/security.md): both processes seal and open the same payloads
  'PAYLOAD_ENCRYPTION',
  'PAYLOAD_ENCRYPTION_KEYS',
  'PAYLOAD_ENCRYPTION_KEY_ID',
  // retention (docs/security.md): the worker sweeps by them
  'RETENTION_CONVERSATIONS',
  'RETENTION_USAGE',
] as const;

export const PASSED_THROUGH_VARIABLES: Record<ClusterRole, readonly string[]> = {
  worker: ['GEMINI_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GCS_BUCKET_NAME', ...OPERATIONS],
  api: ['GEMINI_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GCS_BUCKET_NAME', 'API_TOKENS', ...OPERATIONS],
};

/** KEY=value lines; `#` comments and blank lines ignored; no quoting or interpolation (as docker-compose v1 reads it). */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`deploy/brigade.env line ${index + 1}: expected KEY=value, got "${line}"`);
    values[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return values;
}

export function sharedEnv(file = SHARED_ENV_FILE): Record<string, string> {
  return parseEnvFile(readFileSync(file, 'utf8'));
}

/**
 * The environment of one cluster process: the shared file, the topology's own values (all of them required),
 * the passed-through secrets that are set, then `extra` (tests and drills: a fake model, short timeouts).
 */
export function processEnv(
  role: ClusterRole,
  topology: Record<string, string>,
  opts: { from?: NodeJS.ProcessEnv; extra?: Record<string, string> } = {},
): Record<string, string> {
  const from = opts.from ?? process.env;
  const missing = TOPOLOGY_VARIABLES[role].filter((name) => topology[name] === undefined);
  if (missing.length) throw new Error(`the cluster's ${role} needs ${missing.join(', ')}`);
  const env: Record<string, string> = { ...sharedEnv() };
  for (const name of TOPOLOGY_VARIABLES[role]) env[name] = topology[name]!;
  for (const name of PASSED_THROUGH_VARIABLES[role]) if (from[name]) env[name] = from[name];
  return { ...env, ...opts.extra };
}
