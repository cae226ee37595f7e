// Personal API keys for scripts (issue 34): made by a signed-in person, shown once, stored as a digest, and
// checked in PostgreSQL on every request so that deleting one (or disabling its owner) stops it in every API
// process at once. A key acts with the smaller of its granted roles and its owner's last seen ones.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { asUser } from '../db/pool.ts';
import { plainName } from '../shared/safe-text.ts';
import { principalOf, type Principal } from './auth-types.ts';
import { HttpError, parseBody } from './http-error.ts';
import { InvalidToken } from './oidc.ts';

export const API_KEY_PREFIX = 'brg_';
const KEY_SHAPE = /^brg_[A-Za-z0-9_-]{43}$/;

export const apiKeyDigest = (key: string) => createHash('sha256').update(key).digest();

export const CreateApiKeyBody = z.object({
  name: plainName(100),
  expiresAt: z.iso
    .datetime({ offset: true })
    .refine((at) => Date.parse(at) > Date.now(), 'must be in the future')
    .optional(),
  roles: z.array(z.string().min(1).max(100)).max(50).optional(),
});
export const CreatedApiKey = z.object({ id: z.uuid(), name: z.string(), key: z.string(), expiresAt: z.string().nullable() });
export const ApiKeyView = z.object({
  id: z.uuid(),
  name: z.string(),
  roles: z.array(z.string()).nullable(),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
export const ApiKeyList = z.object({ keys: z.array(ApiKeyView) });

/** Who a presented key acts as, or why not. */
export async function apiKeyPrincipal(pool: pg.Pool, key: string, config: Pick<Config, 'AUTH_API_KEY_OWNER_UNSEEN'>): Promise<Principal> {
  if (!KEY_SHAPE.test(key)) throw new InvalidToken('the API key is not valid');
  const { rows } = await pool.query<{ key_id: string; user_id: string; roles: string[]; client: string | null; refused: string | null }>(
    'SELECT * FROM brigade_api_key_principal($1, make_interval(secs => $2))',
    [apiKeyDigest(key), config.AUTH_API_KEY_OWNER_UNSEEN / 1000],
  );
  const row = rows[0];
  if (!row) throw new InvalidToken('the API key is not valid (unknown or revoked)');
  if (row.refused) throw new InvalidToken(row.refused);
  return { user: row.user_id, roles: row.roles, ...(row.client ? { client: row.client } : {}), via: 'api-key' };
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function apiKeyRoutes({ pool }: { pool: pg.Pool }): express.Router {
  const router = express.Router();

  router.post('/api-keys', async (req, res) => {
    const principal = principalOf(res);
    // A stolen key must not be able to mint keys that outlive it.
    if (principal.via === 'api-key') throw new HttpError(403, 'An API key cannot make API keys; sign in to make one');
    const body = parseBody(CreateApiKeyBody, req.body);
    const missing = (body.roles ?? []).filter((role) => !principal.roles.includes(role));
    if (missing.length)
      throw new HttpError(400, `roles: you do not hold ${missing.map((role) => JSON.stringify(role.slice(0, 60))).join(', ')}`, {
        fields: [{ field: 'roles', message: 'only roles you hold' }],
      });
    const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
    await asUser(pool, principal.user, (db) =>
      db.query('INSERT INTO api_keys (id, user_id, name, key_digest, roles, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        id,
        principal.user,
        body.name,
        apiKeyDigest(key),
        body.roles ? [...new Set(body.roles)].sort() : null,
        expiresAt,
      ]),
    );
    res
      .status(201)
      .setHeader('Cache-Control', 'no-store')
      .json({ id, name: body.name, key, expiresAt: iso(expiresAt) });
  });

  router.get('/api-keys', async (_req, res) => {
    const principal = principalOf(res);
    const { rows } = await asUser(pool, principal.user, (db) =>
      db.query<{ id: string; name: string; roles: string[] | null; expires_at: Date | null; created_at: Date; last_used_at: Date | null }>(
        'SELECT id, name, roles, expires_at, created_at, last_used_at FROM api_keys ORDER BY created_at DESC',
      ),
    );
    res.json({
      keys: rows.map((row) => ({
        id: row.id,
        name: row.name,
        roles: row.roles,
        expiresAt: iso(row.expires_at),
        createdAt: row.created_at.toISOString(),
        lastUsedAt: iso(row.last_used_at),
      })),
    });
  });

  router.delete('/api-keys/:id', async (req, res) => {
    const principal = principalOf(res);
    const id = String(req.params.id);
    if (!z.uuid().safeParse(id).success) throw new HttpError(404, 'No such API key');
    // row-level security: another user's key is not there to delete
    const { rowCount } = await asUser(pool, principal.user, (db) => db.query('DELETE FROM api_keys WHERE id = $1', [id]));
    if (!rowCount) throw new HttpError(404, 'No such API key');
    res.status(204).end();
  });

  return router;
}
