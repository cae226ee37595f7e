// A person's MCP tokens, sealed under their own data key (src/protection/person-keys.ts) before they reach
// PostgreSQL (050_mcp_oauth.sql): AES-256-GCM, the associated data naming the person, the server and the key, so a
// row copied to another person or server does not open. Erasure destroys the key, and with it every copy of the
// tokens (backups, the WAL). Nothing here logs, and the opened tokens live only as long as one request needs them.
import { type KeyObject, createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Config } from '../config.ts';
import * as rows from '../db/mcp-oauth.ts';
import { keyProvider } from '../protection/data-converter.ts';
import { PersonKeys } from '../protection/person-keys.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Tokens as kept: the SDK's, with the issuer it stamps them with. */
export type StoredTokens = OAuthTokens & { issuer?: string };

/**
 * Where a person's sign-in ID token is kept, beside their servers' tokens (one row, sealed the same way): no server
 * is named so, a server's name starting with a letter. Only cross-app servers (SEP-990) read it.
 */
export const SIGN_IN_SLOT = '~sign-in';

export class SealingUnavailable extends Error {
  override name = 'SealingUnavailable';
}

const aad = (user: string, server: string, keyId: string) => Buffer.from(`mcp-oauth\u0000${user}\u0000${server}\u0000${keyId}`, 'utf8');

export class TokenVault {
  readonly pool: pg.Pool;
  readonly #config: ConstructorParameters<typeof TokenVault>[1];
  #keys: PersonKeys | undefined | null = null;

  constructor(
    pool: pg.Pool,
    config: Pick<
      Config,
      'PAYLOAD_ENCRYPTION' | 'PAYLOAD_ENCRYPTION_KEYS' | 'PAYLOAD_ENCRYPTION_KEY_ID' | 'DATABASE_URL' | 'TEMPORAL_ADDRESS'
    >,
  ) {
    this.pool = pool;
    this.#config = config;
  }

  async #key(user: string): Promise<{ id: string; key: KeyObject }> {
    // Read at first use, not at start: settings without keys refuse a Connect (503), not the whole API's start.
    if (this.#keys === null) {
      // settings that lack keys where they are required say so at the codec; here they mean only "nothing to seal under"
      const deployment = (() => {
        try {
          return keyProvider(this.#config);
        } catch {
          return undefined;
        }
      })();
      this.#keys = deployment ? new PersonKeys(this.pool, deployment) : undefined;
    }
    // Without deployment keys there is no person's key to seal under: tokens are never kept in the clear.
    if (!this.#keys)
      throw new SealingUnavailable(
        'MCP servers behind OAuth need payload encryption (PAYLOAD_ENCRYPTION_KEYS): their tokens are sealed under each person’s key',
      );
    return this.#keys.forPerson(user);
  }

  async seal(user: string, server: string, value: unknown): Promise<rows.SealedRow> {
    const { id, key } = await this.#key(user);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(user, server, id));
    const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { keyId: id, sealed };
  }

  /** The sealed value, or undefined when it no longer opens (the person's key was erased or replaced). */
  async open<T>(user: string, server: string, row: rows.SealedRow): Promise<T | undefined> {
    const { id, key } = await this.#key(user);
    if (id !== row.keyId) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, row.sealed.subarray(0, IV_BYTES));
      decipher.setAAD(aad(user, server, id));
      decipher.setAuthTag(row.sealed.subarray(row.sealed.length - TAG_BYTES));
      const text = Buffer.concat([decipher.update(row.sealed.subarray(IV_BYTES, row.sealed.length - TAG_BYTES)), decipher.final()]);
      return JSON.parse(text.toString('utf8')) as T;
    } catch {
      return undefined;
    }
  }

  async tokens(user: string, server: string): Promise<(rows.TokenRow & { tokens: StoredTokens }) | undefined> {
    const row = await rows.tokenRow(this.pool, user, server);
    if (!row) return undefined;
    const tokens = await this.open<StoredTokens>(user, server, row);
    return tokens ? { ...row, tokens } : undefined;
  }

  /** `fresh`: a new authorization (the person connected), not a refresh. */
  async saveTokens(
    user: string,
    server: string,
    tokens: StoredTokens,
    options: { fresh: boolean; discovery?: Record<string, unknown> | null },
  ): Promise<void> {
    const expiresAt = typeof tokens.expires_in === 'number' ? new Date(Date.now() + tokens.expires_in * 1000) : null;
    // kept with its absolute expiry: `expires_in` counts from when it was issued
    const sealed = await this.seal(user, server, { ...tokens, ...(expiresAt ? { expires_at: expiresAt.toISOString() } : {}) });
    await rows.saveTokenRow(this.pool, user, server, { ...sealed, expiresAt, discovery: options.discovery ?? null }, options);
  }

  /** Keeps the ID token of the person's sign-in, sealed, until its own expiry (`exp`), for cross-app servers. */
  async saveIdToken(user: string, idToken: string): Promise<void> {
    const exp = idTokenExpiry(idToken);
    const sealed = await this.seal(user, SIGN_IN_SLOT, { id_token: idToken });
    await rows.saveTokenRow(this.pool, user, SIGN_IN_SLOT, { ...sealed, expiresAt: exp, discovery: null }, { fresh: true });
  }

  /** The person’s sign-in ID token while it has not expired, else why there is none (never kept, erased, expired). */
  async idToken(user: string): Promise<{ idToken: string } | { none: 'missing' | 'expired' }> {
    const row = await rows.tokenRow(this.pool, user, SIGN_IN_SLOT);
    if (!row) return { none: 'missing' };
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) return { none: 'expired' };
    const opened = await this.open<{ id_token: string }>(user, SIGN_IN_SLOT, row);
    return opened ? { idToken: opened.id_token } : { none: 'missing' };
  }
}

/** The `exp` of a JWT, unverified (it was verified at sign-in; this only says when to stop offering it). */
function idTokenExpiry(jwt: string): Date | null {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : null;
  } catch {
    return null;
  }
}
