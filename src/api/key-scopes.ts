// What a personal API key may do (issue 42). Every key has `conversations`: the owner's conversations and what
// the agents serve around them. Each other scope is granted only when asked for as the key is made, since each
// reaches past the conversations: managing keys (making more, revoking the owner's others), erasing the account,
// exporting the whole person at once, and the operator's routes (other people's data, the codec server).
// Tokens, providers' access tokens and the web session are the person themself: they hold every scope, and
// their roles still apply.
import { z } from 'zod';
import { HttpError } from './http-error.ts';

export const API_KEY_SCOPES = ['conversations', 'keys', 'erase', 'export', 'operator'] as const;
export const ApiKeyScope = z.enum(API_KEY_SCOPES);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;
export const DEFAULT_SCOPE: ApiKeyScope = 'conversations';

const WHAT: Record<ApiKeyScope, string> = {
  conversations: "the owner's conversations",
  keys: 'making and revoking API keys',
  erase: 'erasing an account',
  export: "exporting a person's whole data",
  operator: "the operator's routes",
};

/** A principal as far as scopes go (auth-types.ts): a key's are listed, anyone else's are not (every scope). */
type Scoped = { scopes?: readonly ApiKeyScope[] };

/** Whether the principal may use a scope: a key only with the scopes it was made with, anyone else always. */
export const hasScope = (principal: Scoped, scope: ApiKeyScope): boolean => !principal.scopes || principal.scopes.includes(scope);

/** The one check of a key's scopes: 403, in a sentence, when a key was not made with every scope named. */
export function requireScope(principal: Scoped, ...scopes: ApiKeyScope[]): void {
  const missing = scopes.filter((scope) => !hasScope(principal, scope));
  if (!missing.length) return;
  throw new HttpError(
    403,
    `This API key was not made with the ${missing.map((scope) => `"${scope}"`).join(' and ')} scope${missing.length > 1 ? 's' : ''} (${missing
      .map((scope) => WHAT[scope])
      .join('; ')}); make a key with it, or sign in`,
    { scopes: missing },
  );
}
