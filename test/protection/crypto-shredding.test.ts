// Erasure leaves nothing readable (issue 42, item 2): an attacker who copies DATA_DIR (the Temporal dev server's
// SQLite file and its WAL, PostgreSQL's table files) and holds every deployment key finds the person's name,
// e-mail and phone before the erasure (sealed in Temporal's files, plain in PostgreSQL's) and none of them after
// DELETE /v1/me: their data key was destroyed first, and the tables that held their rows were rewritten.
import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { freePort } from '../../stack/ports.ts';
import { SEARCH_ATTRIBUTES } from '../../stack/search-attributes.ts';
import { type TemporalDevServer, startTemporalDevServer } from '../../stack/temporal-dev-server.ts';
import { temporalCliPath } from '../support/harness.ts';
import { OLD_FASHIONED } from '../support/recipes.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const suffix = randomBytes(4).toString('hex');
const PERSON = `shredded-${suffix}`;
const PERSON_TOKEN = `token-shredded-${suffix}-000000000`;
const DEPLOYMENT_KEYS = { k1: randomBytes(32) };
// what only this person's data holds: their name, e-mail and phone, in the title and in what they wrote
const MARKERS = [`Quillon Vantablack ${suffix}`, `quillon.${suffix}@example.org`, `+44 7700 9${parseInt(suffix, 16) % 100000}`];

let dataDir: string;
let temporal: TemporalDevServer;
let app: TestApp;
before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-shred-'));
  // the test's own dev server, with a history file as `npm start` keeps one in DATA_DIR (the shared one is in memory)
  temporal = await startTemporalDevServer({
    binary: temporalCliPath(),
    port: await freePort(),
    uiPort: 0,
    headless: true,
    dbFile: path.join(dataDir, 'temporal.db'),
    namespace: 'default',
    searchAttributes: SEARCH_ATTRIBUTES,
  });
  process.env.BRIGADE_TEST_TEMPORAL_ADDRESS = temporal.address;
  app = await startTestApp({
    env: {
      DATA_DIR: dataDir,
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify(
        Object.fromEntries(Object.entries(DEPLOYMENT_KEYS).map(([id, key]) => [id, key.toString('base64')])),
      ),
    },
    tokens: { [PERSON_TOKEN]: { user: PERSON, roles: ['support', 'recipes'] } },
  });
});
after(async () => {
  await app?.stop();
  await temporal?.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

interface Found {
  /** markers in plain text, by file */
  plain: Set<string>;
  /** markers inside payloads the scan opened */
  sealed: Set<string>;
  /** data keys unwrapped, sealed payloads seen and opened */
  dataKeys: number;
  payloads: number;
  opened: number;
}

/** PostgreSQL's files of the test's database, after a checkpoint wrote what its buffers held. */
async function postgresFiles(): Promise<string[]> {
  const admin = new pg.Client({ connectionString: app.adminUrl });
  await admin.connect();
  try {
    await admin.query('CHECKPOINT');
    const { rows } = await admin.query(
      "SELECT current_setting('data_directory') AS dir, (SELECT oid FROM pg_database WHERE datname = current_database()) AS oid",
    );
    const folder = path.join(rows[0].dir, 'base', String(rows[0].oid));
    return (await fs.readdir(folder)).map((name) => path.join(folder, name));
  } finally {
    await admin.end();
  }
}

const KEY_ID = /person:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A wrapped data key as 041_person_data_keys.sql keeps it: iv ‖ AES-256-GCM(key) ‖ tag, bound to user id NUL key id. */
function unwrap(wrapped: Buffer, wrapping: Buffer, user: string, keyId: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', wrapping, wrapped.subarray(0, 12));
  decipher.setAAD(Buffer.from(`${user}\u0000${keyId}`));
  decipher.setAuthTag(wrapped.subarray(44));
  return Buffer.concat([decipher.update(wrapped.subarray(12, 44)), decipher.final()]);
}

/** Every wrapped data key in the files that one of the deployment keys unwraps: iv ‖ key ‖ tag, 60 bytes near its key id. */
function unwrapAll(files: Buffer[]): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const bytes of files) {
    const text = bytes.toString('latin1');
    for (const match of text.matchAll(KEY_ID)) {
      const keyId = match[0];
      if (keys.has(keyId)) continue;
      const from = Math.max(0, match.index - 200);
      const to = Math.min(bytes.length - 60, match.index + 200);
      search: for (let at = from; at <= to; at++) {
        for (const wrapping of Object.values(DEPLOYMENT_KEYS)) {
          try {
            keys.set(keyId, unwrap(bytes.subarray(at, at + 60), wrapping, PERSON, keyId));
            break search;
          } catch {
            // not a wrapped key at this offset, or not with this key
          }
        }
      }
    }
  }
  return keys;
}

/** Opens a sealed payload's data (iv ‖ ciphertext ‖ tag, the key id as associated data), or undefined. */
function open(data: Buffer, keyId: string, key: Buffer): Buffer | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
    decipher.setAAD(Buffer.from(keyId));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
  } catch {
    return undefined;
  }
}

function varint(bytes: Buffer, at: number): { value: number; size: number } | undefined {
  let value = 0;
  for (let i = 0; i < 4 && at + i < bytes.length; i++) {
    value += (bytes[at + i]! & 0x7f) * 2 ** (7 * i);
    if ((bytes[at + i]! & 0x80) === 0) return { value, size: i + 1 };
  }
  return undefined;
}

/**
 * The attacker's scan: plain markers anywhere; sealed payloads (a Payload proto: metadata naming
 * `binary/encrypted` and a key id, then `data`, field 2) near each `binary/encrypted`, opened with every key.
 */
async function scan(): Promise<Found> {
  const temporalFiles = [path.join(dataDir, 'temporal.db'), path.join(dataDir, 'temporal.db-wal')];
  const temporalBytes = await Promise.all(temporalFiles.map((file) => fs.readFile(file).catch(() => Buffer.alloc(0))));
  const pgBytes = await Promise.all((await postgresFiles()).map((file) => fs.readFile(file).catch(() => Buffer.alloc(0))));
  const found: Found = { plain: new Set(), sealed: new Set(), dataKeys: 0, payloads: 0, opened: 0 };
  const all = [...temporalBytes, ...pgBytes];
  for (const bytes of all) for (const marker of MARKERS) if (bytes.includes(marker)) found.plain.add(marker);

  const dataKeys = unwrapAll(all);
  found.dataKeys = dataKeys.size;
  const keys = new Map<string, Buffer>([...Object.entries(DEPLOYMENT_KEYS), ...dataKeys]);
  const encoding = Buffer.from('binary/encrypted');
  for (const bytes of temporalBytes) {
    for (let hit = bytes.indexOf(encoding); hit !== -1; hit = bytes.indexOf(encoding, hit + 1)) {
      found.payloads++;
      const window = bytes.subarray(Math.max(0, hit - 300), Math.min(bytes.length, hit + 300));
      const ids = new Set([...window.toString('latin1').matchAll(KEY_ID)].map((m) => m[0]));
      for (const id of Object.keys(DEPLOYMENT_KEYS)) if (window.includes(Buffer.from(id))) ids.add(id);
      let opened: Buffer | undefined;
      for (let at = Math.max(0, hit - 300); at < Math.min(bytes.length, hit + 300) && !opened; at++) {
        if (bytes[at] !== 0x12) continue;
        const length = varint(bytes, at + 1);
        if (!length || length.value < 28 || at + 1 + length.size + length.value > bytes.length) continue;
        const data = bytes.subarray(at + 1 + length.size, at + 1 + length.size + length.value);
        for (const id of ids) {
          const key = keys.get(id);
          opened = key && open(data, id, key);
          if (opened) break;
        }
      }
      if (!opened) continue;
      found.opened++;
      for (const marker of MARKERS) if (opened.includes(marker)) found.sealed.add(marker);
    }
  }
  return found;
}

test('after DELETE /v1/me, a scan of DATA_DIR with every deployment key finds none of the person, sealed or plain', async (t) => {
  const call = (method: string, pathname: string, body?: unknown) => app.call(method, pathname, { token: PERSON_TOKEN, body });
  const created = await call('POST', '/v1/conversations', { agent: 'support', title: `Help for ${MARKERS[0]}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const text = `I am ${MARKERS[0]}, e-mail ${MARKERS[1]}, phone ${MARKERS[2]}. Show me everything about customer priya123`;
  const turn = await call('POST', `/v1/conversations/${created.body.id}/messages`, { text });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  // a recipe saved through its child workflow (a random id): the child's payloads are the person's too
  const recipes = await call('POST', '/v1/conversations', { agent: 'recipes' });
  const asked = await call('POST', `/v1/conversations/${recipes.body.id}/messages`, {
    text: `save this recipe: ${MARKERS[0]}'s ${OLD_FASHIONED}`,
  });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const approved = await call('POST', `/v1/conversations/${recipes.body.id}/decisions`, {
    pendingId: asked.body.pending[0].id,
    decision: 'approve',
  });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  const saved = approved.body.messages.find((message: { role: string }) => message.role === 'tool').result;
  assert.equal(saved.status, 'saved', JSON.stringify(saved));
  const child = `save-recipe-${saved.recipe_id}`;
  const noted = () => app.adminQuery('SELECT conversation_workflow_id FROM conversation_child_workflows WHERE workflow_id = $1', [child]);
  assert.deepEqual(await noted(), [{ conversation_workflow_id: recipes.body.workflowId }], "the child is noted as the conversation's");

  const before = await scan();
  t.diagnostic(`before: ${JSON.stringify({ ...before, plain: [...before.plain], sealed: [...before.sealed] })}`);
  assert.ok(before.dataKeys >= 1, 'the scan unwraps the person’s data key from PostgreSQL’s files');
  assert.deepEqual(
    [...before.sealed].sort(),
    [...MARKERS].sort(),
    `the scan opens the person's payloads (${before.opened} of ${before.payloads})`,
  );
  assert.deepEqual([...before.plain].sort(), [...MARKERS].sort(), "and reads their rows' text");

  const erased = await call('DELETE', '/v1/me');
  assert.equal(erased.status, 204);
  const afterErasure = await scan();
  t.diagnostic(`after: ${JSON.stringify({ ...afterErasure, plain: [...afterErasure.plain], sealed: [...afterErasure.sealed] })}`);
  assert.deepEqual([...afterErasure.sealed], [], `opened ${afterErasure.opened} of ${afterErasure.payloads} sealed payloads`);
  assert.deepEqual([...afterErasure.plain], []);
  assert.equal(afterErasure.dataKeys, 0);
  assert.deepEqual(await noted(), [], 'the child went with its conversation');
});
