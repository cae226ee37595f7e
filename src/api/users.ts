// The users table's record of who called and with what roles (issue 34). Written at most once a minute per
// user and process, or at once when the roles or the bar change, so a busy client does not turn reads into writes.
import type pg from 'pg';
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
