import pg from 'pg';

// BIGINT counts (COUNT(*)) come back as strings by default; our counts fit a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

/** The role the app runs as: DML on its tables only, subject to row-level security. */
export const APP_ROLE = 'brigade_app';

export function createPool(connectionString: string, options: { max?: number; role?: string | null } = {}): pg.Pool {
  const role = options.role === undefined ? APP_ROLE : options.role;
  return new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    // The login may own the schema (it runs migrations); every app session drops to the least-privileged role.
    options: role ? `-c role=${role}` : undefined,
    connectionTimeoutMillis: 5_000,
  });
}

export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** A transaction in which row-level security sees `userId` as the current user. */
export function asUser<T>(pool: pg.Pool, userId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (client) => {
    await client.query({ name: 'brigade.as_user', text: "SELECT set_config('brigade.user_id', $1, true)", values: [userId] });
    return fn(client);
  });
}
