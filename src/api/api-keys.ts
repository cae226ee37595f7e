// Personal API keys for scripts (issue 34): made by a signed-in person, shown once, stored as a digest, and
// checked in PostgreSQL on every request so that deleting one, disabling its owner or the owner's API_TOKENS
// entry going (issue 42) stops it in every API process at once. A key acts with the smaller of its granted roles
// and its owner's recorded ones, and within its scopes (key-scopes.ts).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { asUser } from '../db/pool.ts';
import { plainName } from '../shared/safe-text.ts';
import { principalOf, type Principal } from './auth-types.ts';
import { OPERATOR_ROLE } from './codec-server.ts';
import { HttpError, parseBody } from './http-error.ts';
import { API_KEY_SCOPES, ApiKeyScope, DEFAULT_SCOPE, hasScope, requireScope } from './key-scopes.ts';
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
  scopes: z
    .array(ApiKeyScope)
    .max(API_KEY_SCOPES.length * 2)
    .optional()
    .describe(
      `what the key may do besides its owner's conversations ("${DEFAULT_SCOPE}", every key's): "keys" makes and revokes keys, "erase" erases the account, "export" exports the whole person, "operator" the operator's routes (with the operator role)`,
    ),
});
const Scopes = z.array(ApiKeyScope).describe(`the key's scopes, "${DEFAULT_SCOPE}" always among them`);
export const CreatedApiKey = z.object({
  id: z.uuid(),
  name: z.string(),
  key: z.string(),
  expiresAt: z.string().nullable(),
  scopes: Scopes,
});
export const ApiKeyView = z.object({
  id: z.uuid(),
  name: z.string(),
  roles: z.array(z.string()).nullable(),
  scopes: Scopes,
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
export const ApiKeyList = z.object({ keys: z.array(ApiKeyView) });

/** Who a presented key acts as, or why not. */
export async function apiKeyPrincipal(pool: pg.Pool, key: string, config: Pick<Config, 'AUTH_API_KEY_OWNER_UNSEEN'>): Promise<Principal> {
  if (!KEY_SHAPE.test(key)) throw new InvalidToken('the API key is not valid');
  const { rows } = await pool.query<{
    key_id: string;
    user_id: string;
    roles: string[];
    client: string | null;
    scopes: ApiKeyScope[];
    refused: string | null;
  }>('SELECT * FROM brigade_api_key_principal($1, make_interval(secs => $2))', [
    apiKeyDigest(key),
    config.AUTH_API_KEY_OWNER_UNSEEN / 1000,
  ]);
  const row = rows[0];
  if (!row) throw new InvalidToken('the API key is not valid (unknown or revoked)');
  if (row.refused) throw new InvalidToken(row.refused);
  return {
    user: row.user_id,
    roles: row.roles,
    ...(row.client ? { client: row.client } : {}),
    via: 'api-key',
    scopes: row.scopes,
    keyId: row.key_id,
  };
}

/** The scopes a new key asks for, checked against what its maker may do: a key never gets more than its maker. */
function grantedScopes(principal: Principal, asked: readonly ApiKeyScope[]): ApiKeyScope[] {
  const scopes = [...new Set<ApiKeyScope>([DEFAULT_SCOPE, ...asked])].sort();
  const refused = scopes.filter(
    (scope) => !hasScope(principal, scope) || (scope === 'operator' && !principal.roles.includes(OPERATOR_ROLE)),
  );
  if (refused.length)
    throw new HttpError(400, `scopes: you may not grant ${refused.map((scope) => JSON.stringify(scope)).join(', ')}`, {
      fields: [{ field: 'scopes', message: 'only scopes you hold ("operator" needs the operator role)' }],
    });
  return scopes;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function apiKeyRoutes({ pool }: { pool: pg.Pool }): express.Router {
  const router = express.Router();

  router.post('/api-keys', async (req, res) => {
    const principal = principalOf(res);
    requireScope(principal, 'keys');
    const body = parseBody(CreateApiKeyBody, req.body);
    const missing = (body.roles ?? []).filter((role) => !principal.roles.includes(role));
    if (missing.length)
      throw new HttpError(400, `roles: you do not hold ${missing.map((role) => JSON.stringify(role.slice(0, 60))).join(', ')}`, {
        fields: [{ field: 'roles', message: 'only roles you hold' }],
      });
    const scopes = grantedScopes(principal, body.scopes ?? []);
    const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    // A key made by a key (scope "keys") gets no more than its maker: its roles as they are now, no later expiry,
    // and it is revoked with its maker (made_by_key, ON DELETE CASCADE).
    const maker = principal.via === 'api-key' ? principal.keyId : undefined;
    const roles = body.roles ?? (maker ? principal.roles : undefined);
    const { rows } = await asUser(pool, principal.user, (db) =>
      db.query<{ expires_at: Date | null }>(
        `INSERT INTO api_keys (id, user_id, name, key_digest, roles, expires_at, scopes, made_by_key)
         VALUES ($1, $2, $3, $4, $5, LEAST($6::timestamptz, (SELECT expires_at FROM api_keys WHERE id = $8)), $7, $8)
         RETURNING expires_at`,
        [
          id,
          principal.user,
          body.name,
          apiKeyDigest(key),
          roles ? [...new Set(roles)].sort() : null,
          body.expiresAt ? new Date(body.expiresAt) : null,
          scopes,
          maker ?? null,
        ],
      ),
    );
    res
      .status(201)
      .setHeader('Cache-Control', 'no-store')
      .json({ id, name: body.name, key, expiresAt: iso(rows[0]!.expires_at), scopes });
  });

  router.get('/api-keys', async (_req, res) => {
    const principal = principalOf(res);
    requireScope(principal, 'keys');
    const { rows } = await asUser(pool, principal.user, (db) =>
      db.query<{
        id: string;
        name: string;
        roles: string[] | null;
        scopes: ApiKeyScope[];
        expires_at: Date | null;
        created_at: Date;
        last_used_at: Date | null;
      }>('SELECT id, name, roles, scopes, expires_at, created_at, last_used_at FROM api_keys ORDER BY created_at DESC'),
    );
    res.json({
      keys: rows.map((row) => ({
        id: row.id,
        name: row.name,
        roles: row.roles,
        scopes: row.scopes,
        expiresAt: iso(row.expires_at),
        createdAt: row.created_at.toISOString(),
        lastUsedAt: iso(row.last_used_at),
      })),
    });
  });

  router.delete('/api-keys/:id', async (req, res) => {
    const principal = principalOf(res);
    requireScope(principal, 'keys');
    const id = String(req.params.id);
    if (!z.uuid().safeParse(id).success) throw new HttpError(404, 'No such API key');
    // row-level security: another user's key is not there to delete
    const { rowCount } = await asUser(pool, principal.user, (db) => db.query('DELETE FROM api_keys WHERE id = $1', [id]));
    if (!rowCount) throw new HttpError(404, 'No such API key');
    res.status(204).end();
  });

  return router;
}
