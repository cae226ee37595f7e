// After an erasure, the person's rows are dead tuples: gone from every query, still in the table files (and
// their indexes' and TOAST tables') until the space is reused. VACUUM FULL writes each table anew and drops the
// old files at the next checkpoint. The app may do it from PostgreSQL 17 on, where 041 grants it MAINTAIN.
import type pg from 'pg';

/** How long a rewrite waits for its table's lock: requests queue behind a waiting ACCESS EXCLUSIVE lock. */
const LOCK_TIMEOUT = '5s';

export interface TableRewrite {
  table: string;
  ms: number;
}

/** The tables a person's rows live in: those of the public schema with a user_id column. */
async function personTables(client: pg.PoolClient): Promise<{ table: string; allowed: boolean }[]> {
  const { rows } = await client.query(`
    SELECT c.oid::regclass::text AS table, has_table_privilege(c.oid, 'MAINTAIN') AS allowed
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'r'
       AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'user_id' AND NOT a.attisdropped)
     ORDER BY 1`);
  return rows;
}

/**
 * VACUUM FULL of every table a person's rows live in, one at a time (each locked while it is copied). A table the
 * role may not maintain, or whose lock does not come within LOCK_TIMEOUT, is reported to `log` and skipped.
 */
export async function rewritePersonTables(pool: pg.Pool, log: (line: string, error?: unknown) => void): Promise<TableRewrite[]> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ version: number }>("SELECT current_setting('server_version_num')::integer AS version");
    if (rows[0]!.version < 170000) {
      log('Erasure: PostgreSQL before 17 lets only the tables\' owner VACUUM FULL them; run it as the owner (docs/security.md#crypto-shredding)');
      return [];
    }
    const done: TableRewrite[] = [];
    await client.query(`SET lock_timeout = '${LOCK_TIMEOUT}'`);
    for (const { table, allowed } of await personTables(client)) {
      if (!allowed) {
        log(`Erasure: cannot rewrite ${table} (no MAINTAIN privilege); run VACUUM FULL ${table} as its owner`);
        continue;
      }
      const started = performance.now();
      try {
        // the name comes from pg_class as a quoted identifier (regclass), not from input
        await client.query(`VACUUM (FULL) ${table}`);
        done.push({ table, ms: performance.now() - started });
      } catch (error) {
        log(`Erasure: could not rewrite ${table}; its dead tuples stay until autovacuum reuses the space`, error);
      }
    }
    await client.query('RESET lock_timeout');
    return done;
  } finally {
    client.release();
  }
}
