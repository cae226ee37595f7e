// The users table's record of who called and with what roles (issue 34). Written at most once a minute per
// user and process, or at once when the roles or the bar change, so a busy client does not turn reads into writes.
import type pg from 'pg';
import type { TokenGrant } from '../config.ts';
import { describeError } from '../shared/log-safe.ts';

/** The issuer of API_TOKENS users: not a URL, so no OpenID provider can ever be it. */
export const API_TOKENS_ISSUER = 'urn:brigade:api-tokens';
const SEEN_EVERY_MS = 60_000;

export interface Seen {
  user: string;
  iss: string;
  sub: string;
  roles: string[];
  client?: string;
}

export class UserLedger {
  private readonly recent = new Map<string, { at: number; fingerprint: string; disabled: boolean }>();

  private readonly pool: pg.Pool;
  private readonly log: (line: string) => void;

  constructor(pool: pg.Pool, log: (line: string) => void = () => undefined) {
    this.pool = pool;
    this.log = log;
  }

  /** Records the caller; answers whether the account is disabled (as of at most a minute ago, or now when `fresh`). */
  async seen(caller: Seen, options: { fresh?: boolean } = {}): Promise<boolean> {
    const fingerprint = JSON.stringify([caller.roles, caller.client ?? null]);
    const known = this.recent.get(caller.user);
    if (!options.fresh && known && known.fingerprint === fingerprint && Date.now() - known.at < SEEN_EVERY_MS) return known.disabled;
    try {
      const { rows } = await this.pool.query<{ disabled: boolean }>('SELECT brigade_user_seen($1, $2, $3, $4, $5) AS disabled', [
        caller.user,
        caller.iss,
        caller.sub,
        caller.roles,
        caller.client ?? null,
      ]);
      const disabled = rows[0]?.disabled === true;
      if (this.recent.size > 10_000) this.recent.clear();
      this.recent.set(caller.user, { at: Date.now(), fingerprint, disabled });
      return disabled;
    } catch (error) {
      // PostgreSQL down: the route that follows answers 503 on its own; what we knew still holds
      this.log(`users: could not record a caller: ${describeError(error)}`);
      return known?.disabled ?? false;
    }
  }
}

/**
 * The API_TOKENS entries' standing (issue 42), told to PostgreSQL once per API process start: a user of the
 * API_TOKENS issuer whose entry is gone loses standing, so their personal keys refuse on every API process from
 * then on (brigade_api_key_principal reads it per request); one whose entry is there regains it, with the entry's
 * roles and bar. The front door waits for it before it checks a key, and a failure (PostgreSQL not up yet) is
 * tried again at the next key.
 */
export class TokenStanding {
  private done: Promise<void> | undefined;
  private readonly pool: pg.Pool;
  private readonly grants: { user: string; roles: string[]; client: string | null }[];
  private readonly log: (line: string) => void;

  constructor(pool: pg.Pool, tokens: Record<string, TokenGrant>, log: (line: string) => void = () => undefined) {
    this.pool = pool;
    this.log = log;
    // one entry per user: several tokens of one user are one standing (their roles joined; a bar only when they agree)
    const byUser = new Map<string, { user: string; roles: string[]; client: string | null }>();
    for (const grant of Object.values(tokens)) {
      const known = byUser.get(grant.user);
      const client = grant.client ?? null;
      byUser.set(grant.user, {
        user: grant.user,
        roles: [...new Set([...(known?.roles ?? []), ...grant.roles])].sort(),
        client: known && known.client !== client ? null : client,
      });
    }
    this.grants = [...byUser.values()];
  }

  /** Resolves once this process's API_TOKENS are recorded; started at once, so a start records them unasked. */
  ready(): Promise<void> {
    this.done ??= this.record().catch((error: unknown) => {
      this.done = undefined;
      throw error;
    });
    return this.done;
  }

  private async record(): Promise<void> {
    const { rows } = await this.pool.query<{ ended: number; restored: number }>('SELECT * FROM brigade_api_tokens_standing($1)', [
      JSON.stringify(this.grants),
    ]);
    const { ended = 0, restored = 0 } = rows[0] ?? {};
    if (ended || restored)
      this.log(`users: ${ended} API_TOKENS user(s) no longer in API_TOKENS (their API keys stop), ${restored} back in it`);
  }
}
