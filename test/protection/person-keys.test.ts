// Per-person data keys (issue 42, crypto-shredding): a conversation's payloads are sealed under its person's own
// key, which the codec finds from the workflow id (the SDK's serialization context) and a child workflow's from
// its start input; decoding needs no context; once the key is erased nothing sealed under it opens, in any
// process; rotating the deployment keys re-wraps data keys and leaves payloads as they are.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Payload } from '@temporalio/common';
import pg from 'pg';
import { eraseDataKey } from '../../src/db/data-keys.ts';
import { asUser, createPool } from '../../src/db/pool.ts';
import { EncryptionCodec, StaticKeyProvider, UnknownKeyError, sealedWith } from '../../src/protection/payload-codec.ts';
import { PersonKeys, forgetPerson, noteWorkflowOwner, rewrapDataKeys } from '../../src/protection/person-keys.ts';
import { loadConfig } from '../../src/config.ts';
import { payloadCodec } from '../../src/protection/data-converter.ts';
import { freshDatabase } from '../support/harness.ts';

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const k1Only = new StaticKeyProvider({ k1: K1 }, 'k1');

let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
before(async () => {
  database = await freshDatabase();
  pool = createPool(database.url);
});
after(async () => {
  await pool?.end();
  await database?.drop();
});

const plain = (text: string): Payload => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(text)) });
const textOf = (payload: Payload) => JSON.parse(Buffer.from(payload.data!).toString()) as string;
const context = (workflowId: string) => ({ type: 'workflow' as const, namespace: 'default', workflowId });

/** a conversation row of `user` (as the owner: the app's role inserts through its own routes) */
async function conversationOf(user: string): Promise<string> {
  const id = randomUUID();
  const admin = new pg.Client({ connectionString: database.adminUrl });
  await admin.connect();
  try {
    await admin.query(`INSERT INTO conversations (id, user_id, agent, title, workflow_id) VALUES ($1, $2, 'support', 't', $3)`, [
      id,
      user,
      `conversation-${id}`,
    ]);
  } finally {
    await admin.end();
  }
  return `conversation-${id}`;
}

test("a conversation's payloads are sealed under its person's key; others' and system payloads under the deployment key", async () => {
  const codec = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only));
  const alice = await conversationOf('alice-pk');
  const alice2 = await conversationOf('alice-pk');
  const bob = await conversationOf('bob-pk');

  const [a] = await codec.encode([plain('alice says hi')], context(alice));
  const [a2] = await codec.encode([plain('alice again')], { type: 'activity', namespace: 'default', workflowId: alice2, isLocal: true });
  const [b] = await codec.encode([plain('bob says hi')], context(bob));
  const [system] = await codec.encode([plain('sweep')], context('brigade-retention'));
  const [none] = await codec.encode([plain('no context')]);
  assert.match(sealedWith(a!)!, /^person:/);
  assert.equal(sealedWith(a2!), sealedWith(a!), 'one key per person, across their conversations and activities');
  assert.match(sealedWith(b!)!, /^person:/);
  assert.notEqual(sealedWith(b!), sealedWith(a!));
  assert.equal(sealedWith(system!), 'k1', 'no owner: the deployment key, in its format');
  assert.equal(sealedWith(none!), 'k1');
  assert.equal(Buffer.from(a!.data!).includes('alice'), false);

  // decoding needs no context, in another process (a fresh PersonKeys) too
  const elsewhere = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only));
  assert.deepEqual((await elsewhere.decode([a!, b!, system!])).map(textOf), ['alice says hi', 'bob says hi', 'sweep']);
  // a codec without the database cannot open a person's payload, and says why
  await assert.rejects(new EncryptionCodec(k1Only).decode([a!]), /person's data key/);
  // the data key is bound to its person: a row moved to another user does not unwrap
  const admin = new pg.Client({ connectionString: database.adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query('SELECT user_id, key_id, wrapped FROM person_data_keys ORDER BY user_id');
    assert.deepEqual(
      rows.map((row) => row.user_id),
      ['alice-pk', 'bob-pk'],
    );
    assert.equal(rows[0].wrapped.length, 60);
    await admin.query("UPDATE person_data_keys SET user_id = 'mallory-pk' WHERE user_id = 'bob-pk'");
    await assert.rejects(
      new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only)).decode([b!]),
      /unable to authenticate|Unsupported state/,
    );
    await admin.query("UPDATE person_data_keys SET user_id = 'bob-pk' WHERE user_id = 'mallory-pk'");
  } finally {
    await admin.end();
  }
});

test("a child workflow (random id) is sealed under its conversation's person, on any worker", async () => {
  const parent = await conversationOf('carol-pk');
  const child = `save-recipe-${randomUUID()}`;
  const worker1 = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only));
  const [parentPayload] = await worker1.encode([plain('carol')], context(parent));
  const input: Payload = {
    metadata: { encoding: Buffer.from('json/plain') },
    data: Buffer.from(JSON.stringify({ id: 'x', parentWorkflowId: parent })),
  };
  // the start command's summary comes first and names no parent
  const [summary] = await worker1.encode([plain('save_recipe for conversation x')], context(child));
  assert.equal(sealedWith(summary!), 'k1');
  const [start] = await worker1.encode([input], context(child));
  assert.equal(sealedWith(start!), sealedWith(parentPayload!), "the child's input: its parent's person");
  // the child's own activity, on another worker: found through the noted child
  const worker2 = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only));
  const [step] = await worker2.encode([plain('structured recipe')], {
    type: 'activity',
    namespace: 'default',
    workflowId: child,
    isLocal: false,
  });
  assert.equal(sealedWith(step!), sealedWith(parentPayload!));
  // an input that names no conversation is no one's
  const [stray] = await worker1.encode([plain('x')], context(`save-recipe-${randomUUID()}`));
  assert.equal(sealedWith(stray!), 'k1');
});

test("a conversation that starts before its row commits is its person's (the API's note)", async () => {
  const workflowId = `conversation-${randomUUID()}`;
  const codec = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only));
  const [before] = await codec.encode([plain('x')], context(workflowId));
  assert.equal(sealedWith(before!), 'k1', 'unknown and unnoted: the deployment key');
  noteWorkflowOwner(workflowId, 'dave-pk');
  const [noted] = await codec.encode([plain('title naming Dave')], context(workflowId));
  assert.match(sealedWith(noted!)!, /^person:/);
});

test('once the key is erased, nothing sealed under it opens: here at once, elsewhere after the cache lifetime', async () => {
  let now = Date.now();
  const here = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only));
  const there = new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only, { now: () => now }));
  const erin = await conversationOf('erin-pk');
  const [sealed] = await here.encode([plain('erin')], context(erin));
  assert.equal(textOf((await there.decode([sealed!]))[0]!), 'erin', "the other process caches erin's key");

  assert.equal(await asUser(pool, 'erin-pk', (db) => eraseDataKey(db, 'erin-pk')), 1);
  forgetPerson('erin-pk');
  await assert.rejects(here.decode([sealed!]), UnknownKeyError);
  await assert.rejects(new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only)).decode([sealed!]), /was erased/);
  now += 61_000;
  await assert.rejects(there.decode([sealed!]), UnknownKeyError, 'the cached copy expired');
  // the erasure acts for its person only
  await assert.rejects(
    asUser(pool, 'someone-else', (db) => eraseDataKey(db, 'erin-pk')),
    /acts for another user/,
  );
});

test('rotation: k2 becomes current, data keys are re-wrapped, k1 goes, and old payloads still open', async () => {
  const frank = await conversationOf('frank-pk');
  const [old] = await new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only)).encode([plain('frank before')], context(frank));

  const both = new StaticKeyProvider({ k1: K1, k2: K2 }, 'k2');
  const { rewrapped } = await rewrapDataKeys(pool, both);
  assert.ok(rewrapped >= 1, `re-wrapped ${rewrapped}`);
  assert.equal((await rewrapDataKeys(pool, both)).rewrapped, 0, 'nothing left wrapped by k1');

  const k2Only = new StaticKeyProvider({ k2: K2 }, 'k2');
  const after = new EncryptionCodec(k2Only, new PersonKeys(pool, k2Only));
  assert.equal(textOf((await after.decode([old!]))[0]!), 'frank before', 'the payload was not re-sealed; its key was re-wrapped');
  const [fresh] = await after.encode([plain('frank after')], context(frank));
  assert.equal(sealedWith(fresh!), sealedWith(old!), 'the same data key');
  await assert.rejects(new EncryptionCodec(k1Only, new PersonKeys(pool, k1Only)).decode([old!]), /no payload encryption key "k2"/);
});

test("one process's API and worker share its persons' keys: a turn asks the database for its person's key once", async () => {
  // npm start's API and worker each build their converter on a pool of their own, to the same database
  const config = loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: K1.toString('base64') }), DATABASE_URL: database.url });
  const apiPool = createPool(database.url);
  const workerPool = createPool(database.url);
  try {
    const api = payloadCodec(config, apiPool)!;
    const worker = payloadCodec(config, workerPool)!;
    const gina = await conversationOf('gina-pk');
    // the API seals the turn's message: the only lookup of gina's key
    const [sent] = await api.encode([plain('gina asks')], context(gina));
    assert.match(sealedWith(sent!)!, /^person:/);
    // her key's row is gone now (an erasure elsewhere, not yet heard of here): only a key already looked up can serve
    assert.equal(await asUser(pool, 'gina-pk', (db) => eraseDataKey(db, 'gina-pk')), 1);
    assert.equal(textOf((await worker.decode([sent!]))[0]!), 'gina asks', 'the worker opens it with the key the API looked up');
    const [answer] = await worker.encode([plain('the answer')], context(gina));
    assert.equal(sealedWith(answer!), sealedWith(sent!), 'and seals its answer under it without asking again');
    // another key set is another codec, with a cache of its own
    const other = loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k2: K2.toString('base64') }), DATABASE_URL: database.url });
    assert.notEqual(payloadCodec(other, apiPool), api);
    forgetPerson('gina-pk');
    await assert.rejects(worker.decode([sent!]), UnknownKeyError, 'an erasure heard of here still drops it at once');
  } finally {
    await apiPool.end();
    await workerPool.end();
  }
});
