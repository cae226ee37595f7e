import pg from 'pg';

/**
 * One connection of its own for `fn` (outside any pool: setup, checks as the owner, LISTEN), always closed after.
 * A server that drops it meanwhile fails `fn`'s query, not the process.
 */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
