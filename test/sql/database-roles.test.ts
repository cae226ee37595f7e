// The database holds without the parser (issue 17, item 4): hostile statements run directly as the roles
// that run model-written SQL, set up exactly as src/sql/execute.ts sets them up (identity and timeout set
// by brigade_app, then SET LOCAL ROLE), and each is refused by PostgreSQL itself, with the identity that
// row-level security reads unchanged. The app's own uses of the same functions still work.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createPool } from '../../src/db/pool.ts';
import { LIVE_DELTA_CHANNEL } from '../../src/db/live-deltas.ts';
import { SEAL_IDENTITY } from '../../src/sql/execute.ts';
import { freshDatabase } from '../support/harness.ts';

const ALICE = 'alice-roles';
const BOB = 'bob-roles';
const OWN_CLIENT = 'CLT-XLX836';

let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let admin: pg.Pool;

before(async () => {
  database = await freshDatabase();
  pool = createPool(database.url);
  admin = createPool(database.adminUrl, { role: null });
  for (const [user, name] of [
    [ALICE, 'Alice sour'],
    [BOB, 'Bob secret'],
  ] as const) {
    await admin.query(
      "INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions) VALUES ($1, $2, $3, 'cocktail', '[]', '[]')",
      [randomUUID(), user, name],
    );
  }
});
after(async () => {
  await pool?.end();
  await admin?.end();
  await database?.drop();
});

interface Role {
  role: string;
  settings: Record<string, string>;
  /** a query whose rows show whose identity row-level security reads */
  visible: string;
}

const RECIPES: Role = {
  role: 'brigade_recipes_sql',
  settings: { 'brigade.user_id': ALICE },
  visible: 'SELECT name FROM saved_recipes ORDER BY name',
};
const BEER: Role = {
  role: 'brigade_beer_sql',
  settings: { 'brigade.user_id': ALICE, 'brigade.client_id': OWN_CLIENT },
  visible: 'SELECT DISTINCT client_id AS name FROM beer.purchases ORDER BY 1',
};

/**
 * One transaction set up as execute.ts sets it up; `fn` gets a runner that tries one statement in a
 * savepoint (so a refusal does not end the transaction) and answers the SQLSTATE, or 'ok'.
 */
async function asModelRole(
  role: Role,
  fn: (tryStatement: (sql: string) => Promise<string>, client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const [name, value] of Object.entries(role.settings)) await client.query('SELECT set_config($1, $2, true)', [name, value]);
    await client.query("SELECT set_config('statement_timeout', '5000', true)");
    await client.query(SEAL_IDENTITY);
    await client.query(`SET LOCAL ROLE ${role.role}`);
    const tryStatement = async (sql: string): Promise<string> => {
      await client.query('SAVEPOINT attempt');
      try {
        await client.query(sql);
        await client.query('RELEASE SAVEPOINT attempt');
        return 'ok';
      } catch (error) {
        await client.query('ROLLBACK TO SAVEPOINT attempt');
        return (error as { code?: string }).code ?? String(error);
      }
    };
    await fn(tryStatement, client);
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

async function identity(client: pg.PoolClient, role: Role): Promise<Record<string, unknown>> {
  const names = Object.keys(role.settings);
  const { rows } = await client.query(
    'SELECT current_user AS role, array(SELECT current_setting(n, true) FROM unnest($1::text[]) n) AS settings',
    [names],
  );
  return { role: rows[0].role, settings: rows[0].settings, visible: (await client.query(role.visible)).rows.map((row) => row.name) };
}

const IDENTITY_CHANGES = (role: Role) =>
  Object.keys(role.settings).flatMap((name) => [
    `SELECT set_config('${name}', 'someone-else', true)`,
    `SELECT set_config('${name}', 'someone-else', false)`,
    `SELECT pg_catalog.set_config('${name}', 'someone-else', true)`,
    `WITH x AS (SELECT set_config('${name}', 'someone-else', true) AS v) SELECT * FROM x`,
    `SELECT 1 WHERE set_config('${name}', 'someone-else', true) IS NOT NULL`,
    `SELECT * FROM (SELECT 1) a, LATERAL (SELECT set_config('${name}', 'someone-else', true)) b`,
    `SELECT 1 ORDER BY set_config('${name}', 'someone-else', true)`,
    `UPDATE pg_settings SET setting = 'someone-else' WHERE name = '${name}'`,
  ]);

for (const role of [RECIPES, BEER]) {
  describe(`${role.role}: run directly, without the parser`, () => {
    test('cannot change the identity that row-level security reads, nor its timeout or role through set_config', async () => {
      await asModelRole(role, async (tryStatement, client) => {
        const before = await identity(client, role);
        assert.ok((before.visible as string[]).length > 0, 'the role sees its own rows to begin with');
        const statements = [
          ...IDENTITY_CHANGES(role),
          "SELECT set_config('statement_timeout', '0', true)",
          "SELECT set_config('role', 'brigade_app', true)",
          "SELECT set_config('search_path', 'pg_temp, public', true)",
        ];
        for (const sql of statements) {
          assert.equal(await tryStatement(sql), '42501', `refused with permission denied: ${sql}`);
        }
        assert.deepEqual(await identity(client, role), before, 'the identity, the role and what is visible are unchanged');
      });
    });

    test('cannot take an advisory lock in any form, so nothing outlives its savepoint', async () => {
      const forms = [
        'SELECT pg_advisory_lock(42)',
        'SELECT pg_advisory_lock(4, 2)',
        'SELECT pg_advisory_lock_shared(42)',
        'SELECT pg_try_advisory_lock(42)',
        'SELECT pg_try_advisory_lock_shared(4, 2)',
        'SELECT pg_advisory_xact_lock(42)',
        'SELECT pg_try_advisory_xact_lock(42)',
        'SELECT pg_advisory_xact_lock_shared(4, 2)',
        'SELECT pg_advisory_unlock(42)',
        'SELECT pg_advisory_unlock_all()',
      ];
      await asModelRole(role, async (tryStatement, client) => {
        for (const sql of forms) assert.equal(await tryStatement(sql), '42501', `refused: ${sql}`);
        const held = await client.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()");
        assert.equal(held.rows[0].n, 0, 'no advisory lock held');
      });
    });

    test('cannot write messages into the WAL, flushed or not (migration 023)', async () => {
      await asModelRole(role, async (tryStatement) => {
        for (const sql of [
          "SELECT pg_logical_emit_message(false, 'brigade', 'flush', true)",
          "SELECT pg_catalog.pg_logical_emit_message(true, 'x', repeat('y', 1000000))",
          "SELECT pg_logical_emit_message(false, 'x', '\\x00'::bytea)",
        ]) {
          assert.equal(await tryStatement(sql), '42501', `refused: ${sql}`);
        }
      });
    });

    test('cannot NOTIFY the live-delta or event channels: a listener hears nothing', async () => {
      const listener = new pg.Client({ connectionString: database.adminUrl });
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(`${message.channel}:${message.payload}`));
      try {
        await listener.query(`LISTEN ${LIVE_DELTA_CHANNEL}`);
        await listener.query('LISTEN brigade_events');
        await asModelRole(role, async (tryStatement) => {
          for (const sql of [
            `SELECT pg_notify('${LIVE_DELTA_CHANNEL}', '{"conversationId":"x","userId":"bob","text":"forged"}')`,
            "SELECT pg_notify('brigade_events', 'x')",
            `SELECT pg_catalog.pg_notify('${LIVE_DELTA_CHANNEL}', 'forged')`,
          ]) {
            assert.equal(await tryStatement(sql), '42501', `refused: ${sql}`);
          }
        });
        // the transaction above rolled back anyway; a committed one proves the refusal, not the rollback
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(`SET LOCAL ROLE ${role.role}`);
          await assert.rejects(client.query(`SELECT pg_notify('${LIVE_DELTA_CHANNEL}', 'forged')`), { code: '42501' });
          await client.query('ROLLBACK');
        } finally {
          client.release();
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.deepEqual(heard, []);
      } finally {
        await listener.end();
      }
    });

    test('cannot use large objects, nor read files or directories of the server', async () => {
      const statements = [
        'SELECT lo_create(0)',
        'SELECT lo_creat(-1)',
        "SELECT lo_from_bytea(0, 'x'::bytea)",
        'SELECT lo_get(1)',
        'SELECT lo_open(1, 262144)',
        'SELECT lo_unlink(1)',
        "SELECT lo_import('/etc/passwd')",
        "SELECT lo_export(1, '/tmp/x')",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT pg_read_binary_file('/etc/passwd')",
        "SELECT pg_ls_dir('.')",
        "SELECT pg_stat_file('postgresql.conf')",
        'SELECT pg_ls_logdir()',
        'SELECT pg_ls_waldir()',
      ];
      await asModelRole(role, async (tryStatement) => {
        for (const sql of statements) assert.equal(await tryStatement(sql), '42501', `refused: ${sql}`);
      });
    });
  });
}

test("another user's rows stay invisible to the recipes role whatever the query tries", async () => {
  await asModelRole(RECIPES, async (tryStatement, client) => {
    await tryStatement(`SELECT set_config('brigade.user_id', '${BOB}', true)`);
    await tryStatement(`UPDATE pg_settings SET setting = '${BOB}' WHERE name = 'brigade.user_id'`);
    const seen = await client.query("SELECT name FROM saved_recipes WHERE user_id <> 'nobody' OR name LIKE 'Bob%'");
    assert.deepEqual(
      seen.rows.map((row) => row.name),
      ['Alice sour'],
    );
  });
});

describe('a SET statement cannot change whose rows a model role sees', () => {
  const OTHER_CLIENT = 'CLT-CIR922';
  for (const [role, changes, other] of [
    [RECIPES, [`SET brigade.user_id = '${BOB}'`, `SET LOCAL brigade.user_id = '${BOB}'`, 'RESET brigade.user_id'], 'Bob secret'],
    [
      BEER,
      [`SET brigade.client_id = '${OTHER_CLIENT}'`, `SET LOCAL brigade.client_id = '${OTHER_CLIENT}'`, 'RESET brigade.client_id'],
      OTHER_CLIENT,
    ],
  ] as const) {
    test(`${role.role}: a changed identity sees nothing, even with the seal copied across`, async () => {
      for (const change of changes) {
        await asModelRole(role, async (tryStatement, client) => {
          const before = (await identity(client, role)).visible;
          assert.ok((before as string[]).length > 0, 'the sealed identity sees its own rows');
          const seal = (await client.query("SELECT current_setting('brigade.identity_seal') AS seal")).rows[0].seal as string;
          assert.equal(await tryStatement(change), 'ok', 'PostgreSQL lets any role SET a custom setting');
          assert.deepEqual((await identity(client, role)).visible, [], `nothing visible after ${change}`);
          await tryStatement(`SET LOCAL brigade.identity_seal = '${seal}'`);
          assert.ok(!((await identity(client, role)).visible as string[]).includes(other), `${other} stays hidden after ${change}`);
          assert.equal(await tryStatement('SELECT brigade_identity_seal()'), '42501', 'the model role cannot make a seal');
        });
      }
    });
  }
});

describe('brigade_app keeps what the app itself uses', () => {
  test('set_config for the identity, NOTIFY on the live-delta channel, and the summary cache lock', async () => {
    const listener = new pg.Client({ connectionString: database.adminUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    try {
      await listener.query(`LISTEN ${LIVE_DELTA_CHANNEL}`);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        assert.equal((await client.query('SELECT current_user AS role')).rows[0].role, 'brigade_app');
        await client.query("SELECT set_config('brigade.user_id', $1, true)", [ALICE]);
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 8))', ['summary-key']);
        await client.query('SELECT pg_notify($1, $2)', [LIVE_DELTA_CHANNEL, 'from the app']);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(heard, ['from the app']);
    } finally {
      await listener.end();
    }
  });

  test('the model roles are not members of brigade_app, so they inherit none of its grants', async () => {
    const { rows } = await admin.query(
      "SELECT r.rolname FROM pg_roles r WHERE r.rolname IN ('brigade_recipes_sql', 'brigade_beer_sql') AND pg_has_role(r.oid, 'brigade_app', 'MEMBER')",
    );
    assert.deepEqual(rows, []);
  });
});
