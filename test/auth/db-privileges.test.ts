// Issue 34, at the database: brigade_app identifies callers only through the functions that take a digest
// (it can read no key digest, no user list, no session), sees only its own user's keys under row-level
// security, and the roles that run model-written SQL reach none of it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { withClient } from '../../src/db/with-client.ts';
import { freshDatabase } from '../support/harness.ts';

let database: Awaited<ReturnType<typeof freshDatabase>>;
before(async () => {
  database = await freshDatabase();
  await withClient(database.adminUrl, async (admin) => {
    await admin.query(
      `INSERT INTO users (user_id, iss, sub, roles) VALUES ('alice', 'urn:brigade:api-tokens', 'alice', '{support}'), ('bob', 'urn:brigade:api-tokens', 'bob', '{}')`,
    );
    await admin.query(
      `INSERT INTO api_keys (id, user_id, name, key_digest) VALUES (gen_random_uuid(), 'alice', 'a', '\\x01'), (gen_random_uuid(), 'bob', 'b', '\\x02')`,
    );
  });
});
after(async () => {
  await database?.drop();
});

/** `sql` as `role` with brigade.user_id = `user`, in a transaction rolled back after; the error's message or the rows. */
async function as(role: string, user: string, sql: string): Promise<{ rows?: unknown[]; error?: string }> {
  return withClient(database.adminUrl, async (client) => {
    await client.query('BEGIN');
    try {
      // set as the owner: the model roles may not call set_config (migration 013)
      await client.query("SELECT set_config('brigade.user_id', $1, true)", [user]);
      await client.query(`SET LOCAL ROLE ${role}`);
      return { rows: (await client.query(sql)).rows };
    } catch (error) {
      return { error: (error as Error).message };
    } finally {
      await client.query('ROLLBACK');
    }
  });
}

test('brigade_app reads no key digest, no users and no sessions directly', async () => {
  assert.match((await as('brigade_app', 'alice', 'SELECT key_digest FROM api_keys')).error ?? '', /permission denied/);
  assert.match((await as('brigade_app', 'alice', 'SELECT * FROM users')).error ?? '', /permission denied/);
  assert.match((await as('brigade_app', 'alice', 'SELECT * FROM web_sessions')).error ?? '', /permission denied/);
  assert.match(
    (await as('brigade_app', 'alice', "UPDATE users SET disabled_at = NULL WHERE user_id = 'alice'")).error ?? '',
    /permission denied/,
  );
});

test("brigade_app sees and deletes only its own user's keys", async () => {
  const mine = await as('brigade_app', 'alice', 'SELECT name FROM api_keys');
  assert.deepEqual(mine.rows, [{ name: 'a' }]);
  const theirs = await as('brigade_app', 'alice', "DELETE FROM api_keys WHERE user_id = 'bob' RETURNING id");
  assert.deepEqual(theirs.rows, []);
  const planted = await as(
    'brigade_app',
    'alice',
    "INSERT INTO api_keys (id, user_id, name, key_digest) VALUES (gen_random_uuid(), 'bob', 'planted', '\\x03')",
  );
  assert.match(planted.error ?? '', /row-level security/);
});

test('the roles that run model SQL reach none of it', async () => {
  for (const role of ['brigade_recipes_sql', 'brigade_beer_sql']) {
    for (const sql of [
      'SELECT * FROM users',
      'SELECT id FROM api_keys',
      'SELECT * FROM web_sessions',
      "SELECT * FROM brigade_api_key_principal('\\x01', interval '1 day')",
      "SELECT brigade_user_seen('x', 'y', 'z', '{}', NULL)",
    ]) {
      assert.match((await as(role, 'alice', sql)).error ?? '', /permission denied/, `${role}: ${sql}`);
    }
  }
});
