// One person's OAuth client for one MCP server, as the MCP SDK's client auth (auth(), the Streamable HTTP
// transport's authProvider) asks for it. Two uses:
// - `connect` (the API, when the person presses Connect): no token is presented, so the server's 401 starts a
//   new authorization; the SDK discovers, registers and builds the authorization URL, which this keeps for the
//   person's browser, with the PKCE verifier and state kept server side (sealed).
// - `use` (the worker, calling the server for a conversation's owner): the person's sealed tokens, refreshed by the
//   SDK when the server refuses them; when a new authorization would be needed (none yet, the refresh failed, more
//   scope) there is no browser to send anyone to, so it stops with ConnectFirst, which the call answers in words.
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { clientRow, deleteClientRows, markRefreshFailed, saveClientRow } from '../db/mcp-oauth.ts';
import { type HttpServer, resolveEnv } from './config.ts';
import { ConnectFirst } from './oauth-errors.ts';
import type { StoredTokens, TokenVault } from './token-vault.ts';

export type HttpServerConfig = HttpServer & { name: string; transport: 'http' };

/** The state's digest names the pending authorization: the state itself is only in the authorization URL. */
export const stateDigest = (state: string) => createHash('sha256').update(state).digest();

/** Brigade's client metadata: what dynamic registration sends, and a client ID metadata document describes. */
export function clientMetadata(server: HttpServerConfig, redirectUrl: string): OAuthClientMetadata {
  return {
    client_name: 'Brigade',
    redirect_uris: [redirectUrl],
    // refresh_token: the worker renews a person's access without asking them again (SEP-2207)
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(server.oauth?.scope ? { scope: server.oauth.scope } : {}),
  };
}

/** The configured client (pre-registration), with its secret read from the environment now. */
export function preRegistered(server: HttpServerConfig): OAuthClientInformationMixed | undefined {
  const oauth = server.oauth;
  if (!oauth?.clientId) return undefined;
  return { client_id: oauth.clientId, ...(oauth.clientSecret ? { client_secret: resolveEnv(oauth.clientSecret) } : {}) };
}

export class PersonOAuthProvider implements OAuthClientProvider {
  readonly #vault: TokenVault;
  readonly #server: HttpServerConfig;
  readonly #user: string;
  readonly #redirectUrl: string;
  readonly #mode: 'connect' | 'use';
  #discovery: OAuthDiscoveryState | undefined;
  #verifier: string | undefined;
  #state: string | undefined;
  /** connect: where the person's browser goes next */
  authorizationUrl: URL | undefined;
  /** use: the scope a 403 insufficient_scope asked for; the stored token is not refreshed then, it lacks the scope */
  stepUp: string | undefined;

  constructor(options: {
    vault: TokenVault;
    server: HttpServerConfig;
    user: string;
    redirectUrl: string;
    mode: 'connect' | 'use';
    discovery?: OAuthDiscoveryState;
  }) {
    this.#vault = options.vault;
    this.#server = options.server;
    this.#user = options.user;
    this.#redirectUrl = options.redirectUrl;
    this.#mode = options.mode;
    this.#discovery = options.discovery;
  }

  get redirectUrl(): string {
    return this.#redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#server.oauth?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadata(this.#server, this.#redirectUrl);
  }

  state(): string {
    return (this.#state ??= randomBytes(32).toString('base64url'));
  }

  /** the state of the authorization this provider started (connect) */
  get startedState(): string | undefined {
    return this.#state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    return (
      preRegistered(this.#server) ?? ((await clientRow(this.#vault.pool, this.#server.name)) as OAuthClientInformationMixed | undefined)
    );
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    // a pre-registered client is the config's; the SDK only stamps it with its issuer
    if (preRegistered(this.#server)) return;
    const issuer = (information as { issuer?: string }).issuer ?? '';
    await saveClientRow(this.#vault.pool, this.#server.name, issuer, information as Record<string, unknown>);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.#mode === 'connect') return undefined;
    const found = await this.#vault.tokens(this.#user, this.#server.name);
    if (!found || found.refreshFailedAt) return undefined;
    if (this.stepUp) {
      const { refresh_token: _, ...rest } = found.tokens;
      return rest;
    }
    return found.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.#vault.saveTokens(this.#user, this.#server.name, tokens as StoredTokens, {
      fresh: this.#mode === 'connect',
      discovery: (this.#discovery as Record<string, unknown> | undefined) ?? null,
    });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (this.#mode === 'use') throw new ConnectFirst(this.#server.name, this.stepUp ? { scope: this.stepUp } : { expired: true });
    // SEP-2207: a refresh token is asked for where the authorization server offers offline_access
    const supported = (this.#discovery?.authorizationServerMetadata?.scopes_supported ?? []) as string[];
    const scope = authorizationUrl.searchParams.get('scope');
    if (supported.includes('offline_access') && scope !== null && !scope.split(' ').includes('offline_access')) {
      authorizationUrl.searchParams.set('scope', `${scope} offline_access`);
      authorizationUrl.searchParams.set('prompt', 'consent');
    }
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error('No authorization was started');
    return this.#verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
    if ((scope === 'all' || scope === 'client') && !preRegistered(this.#server))
      await deleteClientRows(this.#vault.pool, this.#server.name);
    // refused tokens stay (revocable, and the person is told their sign-in expired) but are never presented again
    if ((scope === 'all' || scope === 'tokens') && this.#mode === 'use')
      await markRefreshFailed(this.#vault.pool, this.#user, this.#server.name);
    if (scope === 'all' || scope === 'verifier') this.#verifier = undefined;
  }
}
