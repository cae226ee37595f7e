import type { Response } from 'express';
import type { TokenGrant } from '../config.ts';
import type { ApiKeyScope } from './key-scopes.ts';

/**
 * Who a request acts as. `user` is the user_id rows carry; `via` says how the caller proved it (an API_TOKENS
 * token, a provider's access token, the web sign-in's cookie, a personal API key); `name` is for display only.
 * `scopes` and `keyId` are a key's alone: anyone else holds every scope (key-scopes.ts).
 */
export type Principal = TokenGrant & {
  via?: 'token' | 'oidc' | 'session' | 'api-key';
  name?: string;
  scopes?: readonly ApiKeyScope[];
  keyId?: string;
};

export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
