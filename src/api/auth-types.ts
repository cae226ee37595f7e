import type { Response } from 'express';
import type { TokenGrant } from '../config.ts';

/**
 * Who a request acts as. `user` is the user_id rows carry; `via` says how the caller proved it (an API_TOKENS
 * token, a provider's access token, the web sign-in's cookie, a personal API key); `name` is for display only.
 */
export type Principal = TokenGrant & { via?: 'token' | 'oidc' | 'session' | 'api-key'; name?: string };

export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
