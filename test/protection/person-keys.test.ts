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
