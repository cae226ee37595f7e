// The rows of MCP authorization (050_mcp_oauth.sql): a person's sealed tokens per server, the authorizations they
// started and have not finished, and Brigade's own client registrations. Sealing is src/mcp/token-vault.ts's;
// every person's row is read and written acting for that person (asUser), so row-level security has the last word.
import type pg from 'pg';
import { asUser, inTransaction } from './pool.ts';

export interface SealedRow {
  keyId: string;
  sealed: Buffer;
}

export interface TokenRow extends SealedRow {
  expiresAt: Date | null;
  wantedScope: string | null;
  discovery: Record<string, unknown> | null;
  connectedAt: Date;
  /** the refresh was refused: the tokens are dead until the person connects again */
  refreshFailedAt: Date | null;
}

export async function tokenRow(pool: pg.Pool, user: string, server: string): Promise<TokenRow | undefined> {
  return asUser(pool, user, async (db) => {
    const { rows } = await db.query({
      name: 'brigade.mcp_token',
      text: `SELECT key_id, sealed, expires_at, wanted_scope, discovery, connected_at, refresh_failed_at FROM mcp_oauth_tokens
              WHERE user_id = $1 AND server = $2`,
      values: [user, server],
    });
    const row = rows[0];
    return row
      ? {
          keyId: row.key_id,
          sealed: row.sealed,
          expiresAt: row.expires_at,
          wantedScope: row.wanted_scope,
          discovery: row.discovery,
          connectedAt: row.connected_at,
          refreshFailedAt: row.refresh_failed_at,
        }
      : undefined;
  });
}

/** The servers the person has tokens for. */
export async function connectedServers(
  pool: pg.Pool,
  user: string,
): Promise<Map<string, { connectedAt: Date; wantedScope: string | null; expired: boolean }>> {
  return asUser(pool, user, async (db) => {
    const { rows } = await db.query(
      'SELECT server, connected_at, wanted_scope, refresh_failed_at IS NOT NULL AS expired FROM mcp_oauth_tokens WHERE user_id = $1',
      [user],
    );
    return new Map(
      rows.map((row) => [row.server as string, { connectedAt: row.connected_at, wantedScope: row.wanted_scope, expired: row.expired }]),
    );
  });
}

export async function saveTokenRow(
  pool: pg.Pool,
  user: string,
  server: string,
  row: SealedRow & { expiresAt: Date | null; discovery?: Record<string, unknown> | null },
  options: { fresh: boolean },
): Promise<void> {
  await asUser(pool, user, (db) =>
    db.query(
      `INSERT INTO mcp_oauth_tokens (user_id, server, key_id, sealed, expires_at, discovery)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (user_id, server) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, expires_at = excluded.expires_at,
         discovery = coalesce(excluded.discovery, mcp_oauth_tokens.discovery), updated_at = now(), refresh_failed_at = NULL,
         -- a new authorization (not a refresh) answers the scope asked for and counts as a new connection
         wanted_scope = CASE WHEN $7 THEN NULL ELSE mcp_oauth_tokens.wanted_scope END,
         connected_at = CASE WHEN $7 THEN now() ELSE mcp_oauth_tokens.connected_at END`,
      [user, server, row.keyId, row.sealed, row.expiresAt, row.discovery ? JSON.stringify(row.discovery) : null, options.fresh],
    ),
  );
}

/**
 * Runs `fn` holding the person's refresh lock for the server (a transaction-scoped advisory lock), so that two
 * workers never refresh the same tokens at once: with rotation, the second would present the refresh token the
 * first just spent, be refused, and mark the person's tokens dead. `fn` reads the tokens again under the lock.
 */
export async function withRefreshLock<T>(pool: pg.Pool, user: string, server: string, fn: () => Promise<T>): Promise<T> {
  return inTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify(['mcp-oauth-refresh', user, server])]);
    return fn();
  });
}

/** A call was refused for want of `scope`: the person's next Connect asks for it. */
export async function wantScope(pool: pg.Pool, user: string, server: string, scope: string): Promise<void> {
  await asUser(pool, user, (db) =>
    db.query('UPDATE mcp_oauth_tokens SET wanted_scope = $3, updated_at = now() WHERE user_id = $1 AND server = $2', [user, server, scope]),
  );
}

/** The authorization server refused the refresh: kept (so the person is told why), but dead until they connect again. */
export async function markRefreshFailed(pool: pg.Pool, user: string, server: string): Promise<void> {
  await asUser(pool, user, (db) =>
    db.query('UPDATE mcp_oauth_tokens SET refresh_failed_at = now(), updated_at = now() WHERE user_id = $1 AND server = $2', [user, server]),
  );
}

export async function deleteTokenRow(pool: pg.Pool, user: string, server: string): Promise<boolean> {
  return asUser(pool, user, async (db) => {
    const { rowCount } = await db.query('DELETE FROM mcp_oauth_tokens WHERE user_id = $1 AND server = $2', [user, server]);
    return (rowCount ?? 0) > 0;
  });
}

export async function savePending(
  pool: pg.Pool,
  user: string,
  pending: SealedRow & { stateDigest: Buffer; server: string; discovery?: Record<string, unknown> | null; ttlMs: number },
): Promise<void> {
  await asUser(pool, user, async (db) => {
    // what the person started and left unfinished goes when they start again (and anything expired with it)
    await db.query('DELETE FROM mcp_oauth_pending WHERE user_id = $1 AND (server = $2 OR expires_at < now())', [user, pending.server]);
    await db.query(
      `INSERT INTO mcp_oauth_pending (state_digest, user_id, server, key_id, sealed, discovery, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7::double precision / 1000))`,
      [
        pending.stateDigest,
        user,
        pending.server,
        pending.keyId,
        pending.sealed,
        pending.discovery ? JSON.stringify(pending.discovery) : null,
        pending.ttlMs,
      ],
    );
  });
}

/** The person's unexpired authorization with this state, taken: a second use finds nothing. */
export async function takePending(
  pool: pg.Pool,
  user: string,
  stateDigest: Buffer,
): Promise<(SealedRow & { server: string; discovery: Record<string, unknown> | null }) | undefined> {
  return asUser(pool, user, async (db) => {
    const { rows } = await db.query(
      `DELETE FROM mcp_oauth_pending WHERE state_digest = $1 AND user_id = $2
       RETURNING server, key_id, sealed, discovery, expires_at > now() AS live`,
      [stateDigest, user],
    );
    const row = rows[0];
    return row?.live ? { server: row.server, keyId: row.key_id, sealed: row.sealed, discovery: row.discovery } : undefined;
  });
}

/** Erasure: every row of the person's, tokens and unfinished authorizations. */
export async function deletePersonRows(pool: pg.Pool, user: string): Promise<number> {
  return asUser(pool, user, async (db) => {
    const tokens = await db.query('DELETE FROM mcp_oauth_tokens WHERE user_id = $1', [user]);
    const pending = await db.query('DELETE FROM mcp_oauth_pending WHERE user_id = $1', [user]);
    return (tokens.rowCount ?? 0) + (pending.rowCount ?? 0);
  });
}

export async function clientRow(pool: pg.Pool, server: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await pool.query('SELECT information FROM mcp_oauth_clients WHERE server = $1 ORDER BY created_at DESC LIMIT 1', [
    server,
  ]);
  return rows[0]?.information;
}

export async function saveClientRow(pool: pg.Pool, server: string, issuer: string, information: Record<string, unknown>): Promise<void> {
  await pool.query(
    `INSERT INTO mcp_oauth_clients (server, issuer, information) VALUES ($1, $2, $3)
     ON CONFLICT (server, issuer) DO UPDATE SET information = excluded.information, created_at = now()`,
    [server, issuer, JSON.stringify(information)],
  );
}

export async function deleteClientRows(pool: pg.Pool, server: string): Promise<void> {
  await pool.query('DELETE FROM mcp_oauth_clients WHERE server = $1', [server]);
}
