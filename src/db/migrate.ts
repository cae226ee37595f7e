import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../db/migrations/', import.meta.url));

// Any constant works; it only has to be the same in every process that migrates this database.
const LOCK_KEY = 0x62726967; // "brig"

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** What migrate() reads: the runtime's folder and each agent's (AgentServer.migrations), from the catalog. */
export interface MigrationSources {
  /** the runtime's folder (default db/migrations; tests give one of their own) */
  dir?: string;
  /** the catalog's agents (their `migrations` folders): their files join the runtime's in one order, by file name */
  agents: readonly { migrations?: URL }[];
}

/** Every migration file's path by name, across the folders; a name in two folders is refused. */
export async function migrationFiles({ dir = MIGRATIONS_DIR, agents }: MigrationSources): Promise<Map<string, string>> {
  const dirs = [dir, ...agents.flatMap((agent) => (agent.migrations ? [fileURLToPath(agent.migrations)] : []))];
  const files = new Map<string, string>();
  for (const folder of dirs) {
    for (const name of (await fs.readdir(folder)).filter((file) => file.endsWith('.sql'))) {
      // the name is the applied record (schema_migrations.version): one name, one file
      if (files.has(name)) throw new MigrationError(`Migration ${name} is in two folders: ${path.dirname(files.get(name)!)} and ${folder}`);
      files.set(name, path.join(folder, name));
    }
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Applies the runtime's `db/migrations/*.sql` and the agents' (src/agents/<agent>/migrations/) in one name order, each file in its own transaction, as the login user
 * (the owner of the schema), never as the app's role. An advisory lock serialises concurrent
 * runners, so a worker and an API starting together migrate once.
 */
export async function migrate(
  databaseUrl: string,
  options: MigrationSources & { log?: (line: string) => void },
): Promise<{ applied: string[] }> {
  const log = options.log ?? (() => undefined);
  const files = await readMigrations(await migrationFiles(options));

  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version    text PRIMARY KEY,
        checksum   text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const { rows } = await client.query<{ version: string; checksum: string }>('SELECT version, checksum FROM schema_migrations');
    const done = new Map(rows.map((row) => [row.version, row.checksum]));

    const applied: string[] = [];
    for (const file of files) {
      const known = done.get(file.version);
      if (known !== undefined) {
        if (known !== file.checksum) {
          throw new MigrationError(
            `Migration ${file.version} was changed after it was applied (checksum ${file.checksum.slice(0, 12)}, applied ${known.slice(0, 12)}); add a new migration instead of editing an applied one`,
          );
        }
        continue;
      }
      log(`migrate: applying ${file.version}`);
      try {
        await client.query('BEGIN');
        await client.query(file.sql);
        await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [file.version, file.checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new MigrationError(`Migration ${file.version} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(file.version);
    }
    return { applied };
  } finally {
    // Closing the session releases the advisory lock too, even after an error.
    await client.end().catch(() => undefined);
  }
}

interface MigrationFile {
  version: string;
  sql: string;
  checksum: string;
}

async function readMigrations(files: Map<string, string>): Promise<MigrationFile[]> {
  return Promise.all(
    [...files].map(async ([name, file]) => {
      const sql = await fs.readFile(file, 'utf8');
      // Line endings differ between checkouts (git autocrlf); the statements do not.
      const checksum = createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');
      return { version: name, sql, checksum };
    }),
  );
}
