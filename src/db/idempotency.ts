// Idempotency keys (db/migrations/004_idempotency.sql), per user and scope, under row-level security.
import type pg from 'pg';

export interface IdempotencyRecord {
  requestHash: string;
  status: number | null;
  response: unknown;
}

/**
 * Claims `key` for this request, or returns the record of whoever claimed it first. A concurrent claim of
 * the same key waits on the unique index until the first transaction ends, then sees its committed row
 * (or, if that rolled back, claims the key itself).
 */
export async function claimIdempotencyKey(
  db: pg.ClientBase,
  claim: { userId: string; scope: string; key: string; requestHash: string; status?: number; response?: unknown },
): Promise<IdempotencyRecord | undefined> {
  const inserted = await db.query(
    `INSERT INTO idempotency_keys (user_id, scope, key, request_hash, status, response) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (user_id, scope, key) DO NOTHING`,
    [claim.userId, claim.scope, claim.key, claim.requestHash, claim.status ?? null, claim.response === undefined ? null : JSON.stringify(claim.response)],
  );
  if (inserted.rowCount) return undefined;
  const { rows } = await db.query<IdempotencyRecord>(
    `SELECT request_hash AS "requestHash", status, response FROM idempotency_keys WHERE user_id = $1 AND scope = $2 AND key = $3`,
    [claim.userId, claim.scope, claim.key],
  );
  if (!rows[0]) throw new Error('An idempotency key conflicted but its row is not visible');
  return rows[0];
}

/** Records the outcome to replay for a key claimed without one. */
export async function recordIdempotentResponse(
  db: pg.ClientBase,
  record: { userId: string; scope: string; key: string; status: number; response: unknown },
): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET status = $4, response = $5 WHERE user_id = $1 AND scope = $2 AND key = $3 AND response IS NULL`,
    [record.userId, record.scope, record.key, record.status, JSON.stringify(record.response)],
  );
}
