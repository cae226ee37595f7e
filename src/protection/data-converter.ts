// The data converter every Temporal client and worker of Brigade uses: the SDK's default payload converter,
// the failure converter that turns failure messages into payloads (failure-converter.ts, in the workflow bundle
// too) and, unless PAYLOAD_ENCRYPTION=off, the encrypting codec. Generic: it encrypts whatever payloads the
// converters produce, wherever large values end up living.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { type Config, ConfigError } from '../config.ts';
import { EncryptionCodec, KEY_BYTES, type KeyProvider, StaticKeyProvider } from './payload-codec.ts';

type EncryptionSettings = Pick<
  Config,
  'PAYLOAD_ENCRYPTION' | 'PAYLOAD_ENCRYPTION_KEYS' | 'PAYLOAD_ENCRYPTION_KEY_ID' | 'DATABASE_URL' | 'TEMPORAL_ADDRESS'
>;

/**
 * The key provider the settings describe, or undefined when payloads travel in the clear: PAYLOAD_ENCRYPTION=off,
 * or the all-embedded dev mode before `npm start` made its dev key. Production settings (DATABASE_URL or
 * TEMPORAL_ADDRESS set) without keys are an error: encryption is never silently off where data is real.
 */
export function keyProvider(config: EncryptionSettings): KeyProvider | undefined {
  if (config.PAYLOAD_ENCRYPTION === 'off') return undefined;
  const keys = config.PAYLOAD_ENCRYPTION_KEYS;
  if (!keys) {
    if (config.DATABASE_URL || config.TEMPORAL_ADDRESS) {
      throw new ConfigError(
        'Invalid configuration:\n  PAYLOAD_ENCRYPTION_KEYS: required with DATABASE_URL or TEMPORAL_ADDRESS, so that Temporal never stores ' +
          'conversations in plain text: {"k1": "<openssl rand -base64 32>"} (or PAYLOAD_ENCRYPTION=off to run without; docs/security.md)',
      );
    }
    return undefined;
  }
  const ids = Object.keys(keys);
  const current = config.PAYLOAD_ENCRYPTION_KEY_ID ?? (ids.length === 1 ? ids[0] : undefined);
  if (!current)
    throw new ConfigError(
      'Invalid configuration:\n  PAYLOAD_ENCRYPTION_KEY_ID: required when PAYLOAD_ENCRYPTION_KEYS holds several keys (the one new payloads use)',
    );
  if (!Object.hasOwn(keys, current))
    throw new ConfigError(`Invalid configuration:\n  PAYLOAD_ENCRYPTION_KEY_ID: "${current}" is not a key id of PAYLOAD_ENCRYPTION_KEYS`);
  return new StaticKeyProvider(keys, current);
}

/** The codec of these settings, or undefined when encryption is off. */
export function payloadCodec(config: EncryptionSettings): EncryptionCodec | undefined {
  const keys = keyProvider(config);
  return keys ? new EncryptionCodec(keys) : undefined;
}

/** The module exporting `failureConverter`, for DataConverter.failureConverterPath and the workflow bundle. */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.ts', import.meta.url));

/**
 * `dataConverter` for Client, Worker.create and Worker.runReplayHistory. Failure messages go into payloads even
 * with encryption off, so the bundle (built once, with the same converter) and the processes always agree.
 */
export function dataConverter(config: EncryptionSettings): DataConverter {
  const codec = payloadCodec(config);
  return { failureConverterPath: FAILURE_CONVERTER_PATH, ...(codec ? { payloadCodecs: [codec] } : {}) };
}

/**
 * `npm start` with nothing configured: one random key kept in DATA_DIR/payload-key (owner-only), so the dev
 * server's history is encrypted too and restarts can read what earlier runs wrote. Returns the settings with it.
 */
export async function withDevPayloadKey<C extends EncryptionSettings>(config: C, dataDir: string): Promise<C> {
  // production settings without keys stop here, before anything starts
  if (config.PAYLOAD_ENCRYPTION === 'off' || keyProvider(config)) return config;
  const key = await loadOrCreatePayloadKey(dataDir);
  return { ...config, PAYLOAD_ENCRYPTION_KEYS: { [DEV_KEY_ID]: new Uint8Array(key) }, PAYLOAD_ENCRYPTION_KEY_ID: DEV_KEY_ID };
}

export const DEV_KEY_ID = 'dev';

/** DATA_DIR/payload-key's key (made on first use); `npm run cluster` hands it to its processes the same way. */
export async function loadOrCreatePayloadKey(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, 'payload-key');
  let key: Buffer | undefined;
  try {
    key = Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // A damaged file is not replaced: a new key could not read what the old one sealed.
  if (key && key.length !== KEY_BYTES)
    throw new ConfigError(
      `${file} does not hold a base64 256-bit key; restore it, or remove it to start over (earlier conversations become unreadable)`,
    );
  if (!key) {
    key = randomBytes(KEY_BYTES);
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  }
  // a file from an older run may have looser permissions than we would create
  await fs.chmod(file, 0o600);
  return key;
}
