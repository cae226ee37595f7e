// A person connecting an MCP server behind OAuth, and disconnecting it (the API's side; the worker's is the
// provider in `use` mode). Connect asks the server without a token, as any call would: its 401 (RFC 9728's
// WWW-Authenticate: resource metadata, scope) starts the SDK's authorization (discovery with its fallbacks,
// registration, PKCE, the resource indicator), and the URL for the person's browser comes back; the verifier
// stays here, sealed, under the state's digest, for one use within PENDING_TTL_MS. The callback, by the same
// person (the state is theirs alone), trades the code for tokens, sealed under their key.
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Config } from '../config.ts';
import * as rows from '../db/mcp-oauth.ts';
import { publicBaseUrl } from '../storage/index.ts';
import { type McpServerConfig, isCrossApp, isPerPerson, withEnv } from './config.ts';
import { type HttpServerConfig, PersonOAuthProvider, preRegistered, stateDigest } from './oauth-provider.ts';
import type { StoredTokens, TokenVault } from './token-vault.ts';

/** How long a started authorization waits for its callback. */
export const PENDING_TTL_MS = 10 * 60_000;

/** Where the authorization server sends the person's browser back: a page route of the API (src/api/mcp-oauth.ts). */
export const CALLBACK_PATH = '/mcp/oauth/callback';
export const oauthRedirectUrl = (config: Pick<Config, 'PUBLIC_URL' | 'HOST' | 'PORT'>) => `${publicBaseUrl(config)}${CALLBACK_PATH}`;

export class ConnectError extends Error {
  override name = 'ConnectError';
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

export interface ServerStatus {
  name: string;
  auth: 'none' | 'oauth';
  /** a person connects it (authorization code), or Brigade is one service identity (client credentials) */
  perPerson: boolean;
  /** per-person servers: whether this person has connected it */
  connected?: boolean;
  connectedAt?: string;
  /** a call was refused for want of this scope: Connect asks for it */
  wantedScope?: string;
  /** the refresh was refused: connected no longer, until the person connects again */
  expired?: boolean;
  agents: string[];
}

export class McpOAuth {
  readonly #servers: Map<string, McpServerConfig>;
  readonly #vault: TokenVault;
  readonly #redirectUrl: string;

  constructor(servers: readonly McpServerConfig[], vault: TokenVault, redirectUrl: string) {
    this.#servers = new Map(servers.map((server) => [server.name, server]));
    this.#vault = vault;
    this.#redirectUrl = redirectUrl;
  }

  #perPerson(name: string): HttpServerConfig {
    const server = this.#servers.get(name);
    if (!server) throw new ConnectError(`No MCP server "${name}" in BRIGADE_MCP_CONFIG`, 404);
    if (!isPerPerson(server))
      throw new ConnectError(`The MCP server ${name} is not one a person connects (it has no "auth": "oauth")`, 409);
    if (isCrossApp(server))
      throw new ConnectError(`The MCP server ${name} is reached with the person's sign-in (cross-app access): sign in again instead`, 409);
    return server as HttpServerConfig;
  }

  async list(user: string): Promise<ServerStatus[]> {
    const connected = await rows.connectedServers(this.#vault.pool, user);
    return [...this.#servers.values()].map((server) => {
      // a cross-app server is the person's too, but nobody connects it: no Connect to offer
      const perPerson = isPerPerson(server) && !isCrossApp(server);
      const mine = connected.get(server.name);
      return {
        name: server.name,
        auth: server.transport === 'http' ? server.auth : 'none',
        perPerson,
        ...(perPerson ? { connected: Boolean(mine) && !mine?.expired } : {}),
        ...(perPerson && mine?.expired ? { expired: true } : {}),
        ...(perPerson && mine ? { connectedAt: mine.connectedAt.toISOString() } : {}),
        ...(perPerson && mine?.wantedScope ? { wantedScope: mine.wantedScope } : {}),
        agents: [...server.agents],
      };
    });
  }

  /** Starts the person's authorization: the URL their browser goes to. */
  async connect(user: string, name: string): Promise<{ authorizationUrl: string }> {
    const server = this.#perPerson(name);
    const provider = new PersonOAuthProvider({ vault: this.#vault, server, user, redirectUrl: this.#redirectUrl, mode: 'connect' });
    const wanted = (await rows.tokenRow(this.#vault.pool, user, name))?.wantedScope;
    try {
      if (wanted) await auth(provider, { serverUrl: server.url, scope: wanted });
      else await this.#probe(server, provider);
      // a server that asked for nothing (or only on calls): its metadata alone starts the authorization
      if (!provider.authorizationUrl) await auth(provider, { serverUrl: server.url });
    } catch (error) {
      if (!provider.authorizationUrl) {
        throw new ConnectError(`The MCP server ${name} could not be authorized: ${(error as Error).message}`, 502);
      }
    }
    const url = provider.authorizationUrl;
    const state = provider.startedState;
    if (!url || !state) throw new ConnectError(`The MCP server ${name} gave no way to authorize`, 502);
    const sealed = await this.#vault.seal(user, name, { verifier: provider.codeVerifier() });
    await rows.savePending(this.#vault.pool, user, {
      ...sealed,
      stateDigest: stateDigest(state),
      server: name,
      discovery: (provider.discoveryState() as Record<string, unknown> | undefined) ?? null,
      ttlMs: PENDING_TTL_MS,
    });
    return { authorizationUrl: url.toString() };
  }

  /** Asks the server what any call would, without a token: its refusal (401, or 403 for scope) starts the authorization. */
  async #probe(server: HttpServerConfig, provider: PersonOAuthProvider): Promise<void> {
    const client = new Client({ name: 'brigade', version: '0.1.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      authProvider: provider,
      requestInit: { headers: withEnv(server.headers) },
    });
    try {
      await client.connect(transport, { timeout: server.callTimeout });
      await client.listTools({}, { timeout: server.callTimeout });
    } catch (error) {
      if (!provider.authorizationUrl) throw error;
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    }
  }

  /** The browser came back with `code` for `state`: the tokens, sealed. Only the person who started it, once, in time. */
  async finish(user: string, code: string, state: string): Promise<{ server: string }> {
    const pending = await rows.takePending(this.#vault.pool, user, stateDigest(state));
    if (!pending) throw new ConnectError('This authorization is unknown, was used already or expired: press Connect again', 400);
    const server = this.#perPerson(pending.server);
    const opened = await this.#vault.open<{ verifier: string }>(user, server.name, pending);
    if (!opened) throw new ConnectError('This authorization can no longer be read: press Connect again', 400);
    const provider = new PersonOAuthProvider({
      vault: this.#vault,
      server,
      user,
      redirectUrl: this.#redirectUrl,
      mode: 'connect',
      ...(pending.discovery ? { discovery: pending.discovery as unknown as OAuthDiscoveryState } : {}),
    });
    provider.saveCodeVerifier(opened.verifier);
    try {
      await auth(provider, { serverUrl: server.url, authorizationCode: code });
    } catch (error) {
      throw new ConnectError(`The MCP server ${server.name} refused the authorization: ${(error as Error).message}`, 502);
    }
    return { server: server.name };
  }

  /** Revokes the person's tokens at the authorization server (when it has a revocation endpoint) and forgets them. */
  async disconnect(user: string, name: string): Promise<{ disconnected: boolean; revoked: boolean }> {
    const server = this.#perPerson(name);
    const found = await this.#vault.tokens(user, name);
    const revoked = found ? await this.#revoke(server, found.tokens, found.discovery) : false;
    const disconnected = await rows.deleteTokenRow(this.#vault.pool, user, name);
    return { disconnected, revoked };
  }

  /** Erasure: every server's tokens revoked where possible, then every row of the person's gone. */
  async erase(user: string): Promise<number> {
    const connected = await rows.connectedServers(this.#vault.pool, user);
    for (const name of connected.keys()) {
      const server = this.#servers.get(name);
      const found = server && (await this.#vault.tokens(user, name).catch(() => undefined));
      if (server?.transport === 'http' && found) await this.#revoke(server as HttpServerConfig, found.tokens, found.discovery);
    }
    return rows.deletePersonRows(this.#vault.pool, user);
  }

  /** RFC 7009, best effort: a provider that cannot be reached must not keep the person connected here. */
  async #revoke(server: HttpServerConfig, tokens: StoredTokens, discovery: Record<string, unknown> | null): Promise<boolean> {
    const metadata = (discovery as OAuthDiscoveryState | null)?.authorizationServerMetadata as { revocation_endpoint?: string } | undefined;
    const endpoint = metadata?.revocation_endpoint;
    if (!endpoint) return false;
    const client = (preRegistered(server) ?? (await rows.clientRow(this.#vault.pool, server.name))) as
      { client_id: string; client_secret?: string } | undefined;
    if (!client) return false;
    let ok = true;
    for (const [token, hint] of [
      [tokens.refresh_token, 'refresh_token'],
      [tokens.access_token, 'access_token'],
    ] as const) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (client.client_secret)
        headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
      else body.set('client_id', client.client_id);
      try {
        const response = await fetch(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
        ok &&= response.ok;
      } catch {
        ok = false;
      }
    }
    return ok;
  }
}
