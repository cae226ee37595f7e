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
}
