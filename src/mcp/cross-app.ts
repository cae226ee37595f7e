// Enterprise-managed authorization (SEP-990, "cross-app access") for a server with `grant: "cross_app"`: the worker
// reaches it as the conversation's owner with no Connect of theirs. The ID token of their sign-in (kept sealed by
// the vault) is exchanged at their identity provider's token endpoint for an ID-JAG (RFC 8693: subject token type
// id_token, requested type id-jag, audience the server's authorization server, resource the MCP server), which the
// authorization server takes with the JWT bearer grant (RFC 7523, the client authenticated with client_secret_basic)
// for the access token. The SDK's auth() runs it as a non-interactive flow (no redirect URL): discovery first, then
// prepareTokenRequest here. A refusal by either party is ConnectFirst in words ("sign in again"), never a lost tool.
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { markRefreshFailed } from '../db/mcp-oauth.ts';
import { resolveEnv } from './config.ts';
import { ConnectFirst } from './oauth-errors.ts';
import type { HttpServerConfig } from './oauth-provider.ts';
import type { StoredTokens, TokenVault } from './token-vault.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

const ExchangeAnswer = z.object({ access_token: z.string().min(1), issued_token_type: z.literal(ID_JAG) });
const ErrorAnswer = z.object({
  error: z
    .string()
    .max(100)
    .regex(/^[\x20-\x7e]+$/),
});

/** client_secret_basic as RFC 6749 (2.3.1) has it: each part form-encoded before base64. */
const basic = (id: string, secret: string) => {
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
};

/**
 * The ID-JAG for one person, server and authorization server (RFC 8693 token exchange at the IdP). A refusal is
 * ConnectFirst naming only the IdP's error code; an IdP out of reach is a plain error, which the call retries.
 */
export async function exchangeForIdJag(
  server: HttpServerConfig,
  request: { idToken: string; audience: string; resource: string; scope?: string },
): Promise<string> {
  const idp = server.oauth!.idp!;
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE,
    requested_token_type: ID_JAG,
    subject_token: request.idToken,
    subject_token_type: ID_TOKEN,
    audience: request.audience,
    resource: request.resource,
    ...(request.scope ? { scope: request.scope } : {}),
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (idp.clientSecret) headers.authorization = basic(idp.clientId, resolveEnv(idp.clientSecret));
  else form.set('client_id', idp.clientId);
  const answer = await fetch(idp.tokenEndpoint, {
    method: 'POST',
    headers,
    body: form,
    redirect: 'error',
    signal: AbortSignal.timeout(10_000),
  });
  const body: unknown = await answer.json().catch(() => undefined);
  if (answer.ok) {
    const parsed = ExchangeAnswer.safeParse(body);
    if (parsed.success) return parsed.data.access_token;
    throw new ConnectFirst(server.name, { signIn: 'its identity provider answered with no ID-JAG' });
  }
  if (answer.status >= 500) throw new Error(`The identity provider of ${server.name} answered ${answer.status}`);
  const code = ErrorAnswer.safeParse(body);
  throw new ConnectFirst(server.name, {
    signIn: `its identity provider refused to exchange the sign-in for access (${code.success ? code.data.error : `HTTP ${answer.status}`})`,
  });
}

/** One person's client for one cross-app server, in the worker. */
export class CrossAppProvider implements OAuthClientProvider {
  readonly #vault: TokenVault;
  readonly #server: HttpServerConfig;
  readonly #user: string;
  #discovery: OAuthDiscoveryState | undefined;

  constructor(options: { vault: TokenVault; server: HttpServerConfig; user: string; discovery?: OAuthDiscoveryState }) {
    this.#vault = options.vault;
    this.#server = options.server;
    this.#user = options.user;
    this.#discovery = options.discovery;
  }

  /** none: the SDK runs the flow without a browser (fetchToken with prepareTokenRequest) */
  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Brigade',
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: 'client_secret_basic',
      ...(this.#server.oauth?.scope ? { scope: this.#server.oauth.scope } : {}),
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    const oauth = this.#server.oauth!;
    return { client_id: oauth.clientId!, client_secret: resolveEnv(oauth.clientSecret!) };
  }

  /** client_secret_basic, whatever the metadata lists (SEP-990); a field, as the SDK calls it unbound */
  readonly addClientAuthentication = async (headers: Headers): Promise<void> => {
    const { client_id, client_secret } = this.clientInformation();
    headers.set('Authorization', basic(client_id, client_secret!));
  };

  async tokens(): Promise<OAuthTokens | undefined> {
    const found = await this.#vault.tokens(this.#user, this.#server.name);
    return found && !found.refreshFailedAt ? found.tokens : undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.#vault.saveTokens(this.#user, this.#server.name, tokens as StoredTokens, {
      fresh: true,
      discovery: (this.#discovery as Record<string, unknown> | undefined) ?? null,
    });
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const discovery = this.#discovery;
    // the ID-JAG's audience is the authorization server as it names itself; its resource is the MCP server
    const audience = discovery?.authorizationServerMetadata?.issuer ?? discovery?.authorizationServerUrl;
    const resource = discovery?.resourceMetadata?.resource ?? this.#server.url;
    if (!audience) throw new Error(`No authorization server was found for ${this.#server.name}`);
    const found = await this.#vault.idToken(this.#user);
    if ('none' in found)
      throw new ConnectFirst(this.#server.name, {
        signIn:
          found.none === 'expired'
            ? 'the sign-in it was reached with has expired'
            : 'Brigade holds no sign-in of this person at their identity provider (they signed in another way, or before it was kept)',
      });
    const assertion = await exchangeForIdJag(this.#server, {
      idToken: found.idToken,
      audience: String(audience),
      resource: String(resource),
      ...(scope ? { scope } : {}),
    });
    return new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...(scope ? { scope } : {}) });
  }

  redirectToAuthorization(): void {
    throw new ConnectFirst(this.#server.name, { signIn: 'its authorization server asked for an interactive sign-in' });
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error('cross-app access uses no authorization code');
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
    // a refused access token is not presented again: the next call exchanges the sign-in anew
    if (scope === 'all' || scope === 'tokens') await markRefreshFailed(this.#vault.pool, this.#user, this.#server.name);
  }
}
