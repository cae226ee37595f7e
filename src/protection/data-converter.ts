// The data converter every Temporal client and worker of Brigade uses: the SDK's default payload converter,
// the failure converter that turns failure messages into payloads (failure-converter.ts, in the workflow bundle
// too) and, unless PAYLOAD_ENCRYPTION=off, the encrypting codec. Generic: it encrypts whatever payloads the
// converters produce, wherever large values end up living. Given the database, a person's payloads are sealed
// under their own data key (person-keys.ts), which erasure destroys.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import pg from 'pg';
import { type Config, ConfigError } from '../config.ts';
import { EncryptionCodec, KEY_BYTES, type KeyProvider, StaticKeyProvider } from './payload-codec.ts';
import { PersonKeys } from './person-keys.ts';
import { refusingCodec } from './refusing-codec.ts';

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

/**
 * The codec of these settings, or undefined when encryption is off. With `pool` (the app's), payloads a person
 * owns are sealed under their data key and such payloads can be opened; without, the deployment key seals all.
 * One codec per database and key set in a process: `npm start`'s API and worker (and the bench's client and
 * worker) then share one cache of persons' keys, so a turn after the cache forgot its person asks the database
 * for their key once, not once in each (issue 49: three lookups, by the API's seal, the worker's open and its seal).
 */
export function payloadCodec(config: EncryptionSettings, pool?: pg.Pool): EncryptionCodec | undefined {
  const keys = keyProvider(config);
  if (!keys) return undefined;
  if (!pool) return new EncryptionCodec(keys);
  const identity = codecIdentity(keys, config, pool);
  let codec = codecs.get(identity);
  if (!codec) {
    codec = new EncryptionCodec(keys, new PersonKeys(connectionsOfItsOwn(pool), keys));
    // a process has one or two; tests make many, of which the newest are the ones in use
    if (codecs.size >= CODECS_MAX) codecs.delete(codecs.keys().next().value!);
    codecs.set(identity, codec);
  }
  return codec;
}

const codecs = new Map<string, EncryptionCodec>();
const CODECS_MAX = 16;

/** The database a pool reaches, as whom, and the deployment keys, hashed: the key material is never kept as text. */
function codecIdentity(keys: KeyProvider, config: EncryptionSettings, pool: pg.Pool): string {
  const { connectionString, host, port, database, user, options } = pool.options;
  const deployment = Object.entries(config.PAYLOAD_ENCRYPTION_KEYS ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, key]) => [id, Buffer.from(key).toString('base64')]);
  return createHash('sha256')
    .update(JSON.stringify([connectionString, host, port, database, user, options, keys.currentKeyId(), deployment]))
    .digest('hex');
}

/**
 * The codec's own few connections, as the app's pool makes them. A conversation is started inside its row's
 * transaction, and sealing the start looks up its owner's data key: on the app's pool, ten creations at once held
 * every connection while each start waited for one, until the start's deadline (503s in a burst of 50).
 * Idle ones close within a second and never hold the process open: the keys are cached, so they are seldom used.
 */
function connectionsOfItsOwn(pool: pg.Pool): pg.Pool {
  const own = new pg.Pool({ ...pool.options, max: CODEC_CONNECTIONS, idleTimeoutMillis: 1_000, allowExitOnIdle: true });
  // a connection dropped while idle (a PostgreSQL restart) is made again on the next use, not a crash
  own.on('error', () => undefined);
  return own;
}

const CODEC_CONNECTIONS = 4;

/** The module exporting `failureConverter`, for DataConverter.failureConverterPath and the workflow bundle. */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.ts', import.meta.url));

/**
 * `dataConverter` for Client, Worker.create and Worker.runReplayHistory. Failure messages go into payloads even
 * with encryption off, so the bundle (built once, with the same converter) and the processes always agree.
 */
export function dataConverter(config: EncryptionSettings, pool?: pg.Pool): DataConverter {
  const codec = payloadCodec(config, pool);
  // a payload that cannot be opened is refused at the boundary, never a failed workflow task (refusing-codec.ts)
  return { failureConverterPath: FAILURE_CONVERTER_PATH, ...(codec ? { payloadCodecs: [refusingCodec(codec)] } : {}) };
}

/**
 * `npm start` with nothing configured: one random key kept outside DATA_DIR (devKeyFile, owner-only), so the dev
 * server's history is encrypted too and restarts can read what earlier runs wrote. Returns the settings with it.
 */
export async function withDevPayloadKey<C extends EncryptionSettings>(config: C, dataDir: string, keysDir?: string): Promise<C> {
  // production settings without keys stop here, before anything starts
  if (config.PAYLOAD_ENCRYPTION === 'off' || keyProvider(config)) return config;
  const key = await loadOrCreatePayloadKey(dataDir, keysDir);
  return { ...config, PAYLOAD_ENCRYPTION_KEYS: { [DEV_KEY_ID]: new Uint8Array(key) }, PAYLOAD_ENCRYPTION_KEY_ID: DEV_KEY_ID };
}

export const DEV_KEY_ID = 'dev';

/** Where dev keys live: $XDG_CONFIG_HOME/brigade/keys, or ~/.config/brigade/keys. */
export function devKeysDir(): string {
  return path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'brigade', 'keys');
}

/**
 * The dev key of DATA_DIR: not in it, so that a copy of DATA_DIR (a backup, a disk image, a tarball sent along
 * with a bug report) holds the sealed history without the key that opens it. One file per DATA_DIR, named by
 * the hash of its absolute path.
 */
export function devKeyFile(dataDir: string, keysDir = devKeysDir()): string {
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 32);
  return path.join(keysDir, `${id}.key`);
}

/**
 * DATA_DIR's dev key (made on first use, or moved out of DATA_DIR/payload-key where earlier versions kept it);
 * `npm run cluster` hands it to its processes the same way.
 */
export async function loadOrCreatePayloadKey(dataDir: string, keysDir = devKeysDir()): Promise<Buffer> {
  const file = devKeyFile(dataDir, keysDir);
  await fs.mkdir(keysDir, { recursive: true, mode: 0o700 });
  await moveOldDevKey(path.join(dataDir, 'payload-key'), file);
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
  // DATA_DIR names its key by fingerprint: a DATA_DIR moved elsewhere (another hash) must not get a new key silently
  const fingerprintFile = path.join(dataDir, 'payload-key.fingerprint');
  const expected = await fs.readFile(fingerprintFile, 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
  if (!key && expected)
    throw new ConfigError(
      `${dataDir} was sealed with the dev key of fingerprint ${expected}, which is not at ${file}: move it there from where it was ` +
        `(the folder's path changed?), or remove ${fingerprintFile} to start with a new key (earlier conversations become unreadable)`,
    );
  if (key && expected && expected !== fingerprint(key))
    throw new ConfigError(`${file} is not the dev key ${dataDir} was sealed with (fingerprint ${expected}); restore that key`);
  if (!key) {
    key = randomBytes(KEY_BYTES);
    // `wx`: two starts at once keep the first one's key
    await fs.writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      key = Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
    });
  }
  // a file from an older run may have looser permissions than we would create
  await fs.chmod(file, 0o600);
  if (!expected) {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(fingerprintFile, `${fingerprint(key!)}\n`, { mode: 0o600 });
  }
  return key!;
}

/** Names a key without revealing it: the first 16 hex digits of SHA-256 over it. */
const fingerprint = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** An earlier version's DATA_DIR/payload-key goes to the keys folder (unless a key is there already: it is kept, never overwritten). */
async function moveOldDevKey(old: string, file: string): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(old, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await fs.writeFile(file, text, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if ((await fs.readFile(file, 'utf8')).trim() !== text.trim())
      throw new ConfigError(
        `${old} and ${file} hold different keys: keep the one that opens this DATA_DIR's history (move it to ${file}) and remove the other`,
      );
  }
  await fs.rm(old);
}
