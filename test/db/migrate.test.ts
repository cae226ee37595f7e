import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { BUILT_IN_AGENTS } from '../../src/agents/catalog.ts';
import { MigrationError, migrate, migrationFiles } from '../../src/db/migrate.ts';
import { asUser, createPool } from '../../src/db/pool.ts';
import { freshDatabase } from '../support/harness.ts';

/** An empty database (not the migrated template): what migrate() meets on a first deploy. */
async function emptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.BRIGADE_TEST_PG_ADMIN_URL;
  assert.ok(server, 'run with the global setup (npm test)');
  const name = `m_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client(server);
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The migrations a database of the built-in agents gets: the runtime's folder and each agent's home. */
const agents = BUILT_IN_AGENTS;
const allNames = async () => [...(await migrationFiles({ agents })).keys()];

describe('migrate', () => {
  test("the agents' migrations, from their homes, keep the names and the one global order databases have applied", async () => {
    // schema_migrations records these names: a renamed or reordered file would run again on an existing database
    assert.deepEqual(await allNames(), [
      '001_runtime.sql',
      '002_support.sql',
      '003_notify_per_statement.sql',
      '004_idempotency.sql',
      '005_recipes.sql',
      '006_message_cards.sql',
      '007_beer.sql',
      '008_beer_summaries.sql',
      '010_batch_writes.sql',
      '013_sql_role_hardening.sql',
      '014_sql_limits.sql',
      '015_recipe_images.sql',
      '016_sealed_identity.sql',
      '017_beer_published_aggregates.sql',
      '018_turn_control.sql',
      '020_agent_names_from_registry.sql',
      '021_event_notify_upto.sql',
      '022_beer_bar_list.sql',
      '023_commit_flush.sql',
      '028_usage_ledger.sql',
      '030_user_limits.sql',
      '032_conversation_titles.sql',
      '033_users_and_api_keys.sql',
      '034_web_sessions.sql',
      '035_erasure.sql',
      '036_retention.sql',
      '039_erase_usage_ledger.sql',
      '040_erase_sign_in.sql',
      '041_person_data_keys.sql',
      '042_api_key_standing_and_scopes.sql',
      '043_erasure_fence.sql',
      '044_session_proof.sql',
      '045_reserve_what_is_sent.sql',
      '046_conversation_summaries.sql',
      '047_cached_input_tokens.sql',
      '048_conversation_tree.sql',
      '049_agent_state_snapshots.sql',
      '050_mcp_oauth.sql',
      '051_schedules.sql',
    ]);
    const files = await migrationFiles({ agents });
    const homes: [string, string][] = [
      ['002_support.sql', 'src/agents/support/migrations'],
      ['005_recipes.sql', 'src/agents/recipes/migrations'],
      ['015_recipe_images.sql', 'src/agents/recipes/migrations'],
      ['007_beer.sql', 'src/agents/beer/migrations'],
      ['022_beer_bar_list.sql', 'src/agents/beer/migrations'],
    ];
    for (const [name, home] of homes) assert.ok(files.get(name)!.endsWith(path.join(home, name)), `${name} is in ${home}`);
  });

  test('a name in two folders is refused, naming both', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-migrations-'));
    try {
      await fs.writeFile(path.join(dir, '005_recipes.sql'), 'SELECT 1;');
      await assert.rejects(
        migrationFiles({ agents: [...agents, { migrations: pathToFileURL(`${dir}/`) }] }),
        /005_recipes\.sql is in two folders/,
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('applies every migration in name order, then nothing on a second run', async () => {
    const db = await emptyDatabase();
    cleanups.push(db.drop);
    const expected = await allNames();
    assert.ok(expected.length > 0);

    const lines: string[] = [];
    const first = await migrate(db.url, { agents, log: (line) => lines.push(line) });
    assert.deepEqual(first.applied, expected);
    assert.equal(lines.length, expected.length);

    const rows = await query<{ version: string; checksum: string; applied_at: Date }>(
      db.url,
      'SELECT version, checksum, applied_at FROM schema_migrations ORDER BY version',
    );
    assert.deepEqual(
      rows.map((row) => row.version),
      expected,
    );
    for (const row of rows) {
      assert.match(row.checksum, /^[0-9a-f]{64}$/);
      assert.ok(row.applied_at instanceof Date);
    }

    const second = await migrate(db.url, { agents });
    assert.deepEqual(second.applied, []);
  });

  test('two runners at once: the advisory lock lets one apply, the other finds the work done', async () => {
    const db = await emptyDatabase();
    cleanups.push(db.drop);
    const [a, b] = await Promise.all([migrate(db.url, { agents }), migrate(db.url, { agents })]);
    const total = [...a.applied, ...b.applied].sort();
    const expected = await allNames();
    assert.deepEqual(total, expected, 'each migration applied exactly once');
  });

  test('a changed applied file is refused, naming it; a failing file rolls back alone', async () => {
    const db = await emptyDatabase();
    cleanups.push(db.drop);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-migrations-'));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));

    await fs.writeFile(path.join(dir, '001_first.sql'), 'CREATE TABLE first_table (id int);');
    await fs.writeFile(path.join(dir, '002_second.sql'), 'CREATE TABLE second_table (id int);');
    assert.deepEqual((await migrate(db.url, { dir, agents: [] })).applied, ['001_first.sql', '002_second.sql']);

    await fs.writeFile(path.join(dir, '001_first.sql'), 'CREATE TABLE first_table (id bigint);');
    await assert.rejects(migrate(db.url, { dir, agents: [] }), (error: Error) => {
      assert.ok(error instanceof MigrationError);
      assert.match(error.message, /001_first\.sql was changed after it was applied/);
      return true;
    });

    // Restored file: fine again. A broken new file fails with its name and leaves no trace.
    await fs.writeFile(path.join(dir, '001_first.sql'), 'CREATE TABLE first_table (id int);');
    await fs.writeFile(path.join(dir, '003_broken.sql'), 'CREATE TABLE third_table (id int);\nSELECT no_such_function();');
    await assert.rejects(
      migrate(db.url, { dir, agents: [] }),
      /Migration 003_broken\.sql failed: function no_such_function\(\) does not exist/,
    );
    const tables = await query<{ table_name: string }>(
      db.url,
      "SELECT table_name FROM information_schema.tables WHERE table_name = 'third_table'",
    );
    assert.deepEqual(tables, [], 'the failed file was rolled back');
    const versions = await query<{ version: string }>(db.url, 'SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      versions.map((row) => row.version),
      ['001_first.sql', '002_second.sql'],
    );
  });

  describe('row-level security as brigade_app', () => {
    let db: Awaited<ReturnType<typeof freshDatabase>>;
    let app: pg.Pool;
    const alice = randomUUID();
    const bob = randomUUID();

    before(async () => {
      db = await freshDatabase();
      // Fixtures as the login (owner): the app role could only insert rows for the user it is.
      await query(
        db.adminUrl,
        `INSERT INTO conversations (id, user_id, agent, title, workflow_id) VALUES
           ($1::uuid, 'alice', 'recipes', 'Alice talks', 'conversation-' || $1::text),
           ($2::uuid, 'bob', 'support', 'Bob talks', 'conversation-' || $2::text)`,
        [alice, bob],
      );
      await query(
        db.adminUrl,
        `INSERT INTO messages (id, conversation_id, user_id, role, text) VALUES
           ('m1', $1, 'alice', 'user', 'hello from alice'),
           ('m1', $2, 'bob', 'user', 'hello from bob')`,
        [alice, bob],
      );
      app = createPool(db.url, { max: 2 });
    });
    after(async () => {
      await app?.end();
      await db?.drop();
    });

    test('a user sees only their own conversations and messages', async () => {
      const seen = await asUser(app, 'alice', async (client) => ({
        role: (await client.query<{ current_user: string }>('SELECT current_user')).rows[0]?.current_user,
        conversations: (await client.query<{ id: string }>('SELECT id FROM conversations')).rows.map((row) => row.id),
        messages: (await client.query<{ text: string }>('SELECT text FROM messages')).rows.map((row) => row.text),
        bobsById: (await client.query('SELECT 1 FROM conversations WHERE id = $1', [bob])).rowCount,
      }));
      assert.deepEqual(seen, { role: 'brigade_app', conversations: [alice], messages: ['hello from alice'], bobsById: 0 });
    });

    test('without a user set, nothing is visible', async () => {
      const { rows } = await app.query('SELECT id FROM conversations');
      assert.deepEqual(rows, []);
    });

    test('writing a row for another user is refused by the policy', async () => {
      await assert.rejects(
        asUser(app, 'alice', (client) =>
          client.query("INSERT INTO conversations (id, user_id, agent, title, workflow_id) VALUES ($1, 'bob', 'recipes', 'x', $2)", [
            randomUUID(),
            `conversation-${randomUUID()}`,
          ]),
        ),
        /row-level security policy/,
      );
    });

    test('the app role cannot rewrite the append-only event log', async () => {
      await assert.rejects(
        asUser(app, 'alice', (client) => client.query("UPDATE messages SET text = 'rewritten'")),
        /permission denied for table messages/,
      );
    });
  });
});
