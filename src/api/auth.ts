// The API's front door (issue 34): an API_TOKENS token, a personal API key (brg_…), an OpenID provider's JWT
// access token, or the web sign-in's session cookie with its page's proof (issue 42). A refusal is 401 with
// WWW-Authenticate as RFC 6750 has it, saying why in words and never repeating the token; no log line holds
// one either.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type pg from 'pg';
import type { Config, TokenGrant } from '../config.ts';
import { API_KEY_PREFIX, apiKeyPrincipal } from './api-keys.ts';
import type { Principal } from './auth-types.ts';
import { HttpError } from './http-error.ts';
import { InvalidToken, type OidcVerifier, ProviderUnavailable } from './oidc.ts';
import { API_TOKENS_ISSUER, type UserLedger } from './users.ts';
import { PROOF_HEADER, type WebSessions } from './web-sign-in.ts';

export { principalOf, type Principal } from './auth-types.ts';

const digest = (token: string) => createHash('sha256').update(token).digest();
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** An RFC 6750 quoted-string: the description is ours, but keep it to printable ASCII without quotes. */
const quoted = (text: string) => text.replace(/[^\x20-\x7e]|["\\]/g, "'");

function refuse(res: Response, next: NextFunction, description: string, error?: 'invalid_token' | 'invalid_request'): void {
  // With no credentials at all RFC 6750 (3.1) wants no error code, only the challenge.
  res.setHeader(
    'WWW-Authenticate',
    error ? `Bearer realm="brigade", error="${error}", error_description="${quoted(description)}"` : 'Bearer realm="brigade"',
  );
  next(new HttpError(401, description.charAt(0).toUpperCase() + description.slice(1)));
}

export interface AuthDeps {
  tokens: Record<string, TokenGrant>;
  pool: pg.Pool;
  config: Pick<Config, 'AUTH_API_KEY_OWNER_UNSEEN'>;
  ledger: UserLedger;
  oidc?: OidcVerifier;
  sessions?: WebSessions;
  /** this process's API_TOKENS recorded as the users' standing: awaited before a key is checked */
  standing?: { ready(): Promise<void> };
}

/** Bearer tokens of API_TOKENS are compared by digest in constant time, so neither timing nor a log line leaks one. */
export function authenticate({ tokens, pool, config, ledger, oidc, sessions, standing }: AuthDeps) {
  const grants = Object.entries(tokens).map(([token, grant]) => ({ digest: digest(token), grant }));

  async function fromBearer(token: string): Promise<Principal> {
    if (token.startsWith(API_KEY_PREFIX)) {
      await standing?.ready();
      return apiKeyPrincipal(pool, token, config);
    }
    const presented = digest(token);
    const found = grants.find((entry) => timingSafeEqual(entry.digest, presented));
    if (found) {
      const { grant } = found;
      // recorded so that the user's API keys know their roles; a token user is never disabled from here
      await ledger.seen({ user: grant.user, iss: API_TOKENS_ISSUER, sub: grant.user, roles: grant.roles, client: grant.client });
      return { ...grant, via: 'token' };
    }
    if (oidc && JWT_SHAPE.test(token)) {
      const identity = await oidc.verify(token);
      if (
        await ledger.seen({ user: identity.user, iss: identity.iss, sub: identity.sub, roles: identity.roles, client: identity.client })
      ) {
        throw new InvalidToken('the account is disabled');
      }
      return {
        user: identity.user,
        roles: identity.roles,
        ...(identity.client ? { client: identity.client } : {}),
        name: identity.name,
        via: 'oidc',
      };
    }
    throw new InvalidToken('the bearer token is not valid');
  }

  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    try {
      if (header !== undefined) {
        const match = /^Bearer\s+(\S+)$/i.exec(header);
        if (!match) return refuse(res, next, 'a bearer token is required (Authorization: Bearer <token>)', 'invalid_request');
        res.locals.principal = await fromBearer(match[1]!);
        return next();
      }
      const session = sessions && (await sessions.principal(req));
      if (session) {
        // the cookie alone reaches servers on the host's other ports too: it counts only with the page's proof
        if (!session.proven)
          return refuse(
            res,
            next,
            `a session cookie counts only with the ${PROOF_HEADER} header of the page that signed in`,
            'invalid_token',
          );
        res.locals.principal = session.principal;
        return next();
      }
      refuse(res, next, 'a bearer token is required (Authorization: Bearer <token>)');
    } catch (error) {
      if (error instanceof InvalidToken) return refuse(res, next, error.message, 'invalid_token');
      if (error instanceof ProviderUnavailable) {
        res.setHeader('Retry-After', '10');
        return next(new HttpError(503, 'The sign-in provider cannot be reached to check this token; try again shortly'));
      }
      next(error);
    }
  };
}
