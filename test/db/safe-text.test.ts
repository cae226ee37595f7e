// The rule for text PostgreSQL cannot store (src/shared/safe-text.ts), and that PostgreSQL really takes the repaired text.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { SafeJsonObject, isStorableText, storableJson, storableText } from '../../src/shared/safe-text.ts';
import { freshDatabase } from '../support/harness.ts';

let database: Awaited<ReturnType<typeof freshDatabase>>;
let client: pg.Client;
before(async () => {
  database = await freshDatabase();
  client = new pg.Client({ connectionString: database.adminUrl });
  await client.connect();
});
after(async () => {
  await client?.end();
  await database?.drop();
});

const UNSTORABLE = ['\u0000', 'a\u0000b', '\ud83d', 'x\udc00', '\udc00\ud83d'];
const STORABLE = ['', 'plain', '😀', '\u202eRTL\u202c', '\ufeff', '\uFFFD'];

test('NUL and unpaired surrogates are unstorable; pairs, RTL marks and U+FFFD are fine', () => {
  for (const text of UNSTORABLE) assert.equal(isStorableText(text), false, JSON.stringify(text));
  for (const text of STORABLE) assert.equal(isStorableText(text), true, JSON.stringify(text));
  assert.equal(storableText('a\u0000b\ud83d😀'), 'a\uFFFDb\uFFFD😀');
});

test('repaired text and JSON are accepted by a text and a jsonb column', async () => {
  for (const text of UNSTORABLE) {
    await assert.rejects(client.query('SELECT $1::jsonb', [JSON.stringify({ text })]));
    const stored = await client.query('SELECT $1::text AS t, $2::jsonb AS j', [
      storableText(text),
      JSON.stringify(storableJson({ [text]: [text] })),
    ]);
    assert.equal(stored.rows[0].t, storableText(text));
    assert.deepEqual(stored.rows[0].j, { [storableText(text)]: [storableText(text)] });
  }
});

test('storableJson leaves clean values as they are and repairs keys and nested strings', () => {
  const clean = { a: [1, 'two', { three: null }], when: new Date(0) };
  assert.equal(storableJson(clean), clean);
  const repaired = storableJson({ 'k\u0000': ['\ud83d', { deep: 'x\u0000' }], when: new Date(0) });
  assert.deepEqual(repaired, { 'k\uFFFD': ['\uFFFD', { deep: 'x\uFFFD' }], when: '1970-01-01T00:00:00.000Z' });
});

test('SafeJsonObject names the path of an unstorable string or key, and bounds nesting without recursion', () => {
  const bad = SafeJsonObject.safeParse({ a: { b: [0, 'x\u0000'] } });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ['a', 'b', 1]);
  assert.equal(SafeJsonObject.safeParse({ ['k\ud83d']: 1 }).success, false);
  let deep: unknown = 'leaf';
  for (let level = 0; level < 100_000; level++) deep = [deep];
  const tooDeep = SafeJsonObject.safeParse({ deep });
  assert.equal(tooDeep.success, false);
  assert.match(tooDeep.error!.issues[0]!.message, /deeper than 16/);
  assert.equal(SafeJsonObject.safeParse({ ok: { nested: ['fine', 1, true, null] } }).success, true);
});
