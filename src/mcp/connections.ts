// The worker's connections to MCP servers: a stdio server is a child process of the worker, started on first
// use and started again on the next use after it dies; an HTTP server keeps its Streamable HTTP session. Each
// server's tool list is cached until the server says it changed (notifications/tools/list_changed). close()
// stops them all with the worker. Header and env values with `${NAME}` are resolved here, at connect time,
// and never logged. A server behind OAuth that each person connects (`auth: "oauth"`) has one connection per
// person, authorized with that person's sealed tokens only (src/mcp/oauth-provider.ts, `use`): a conversation's
// calls go out with its owner's token, never anyone else's. One with the client-credentials grant is one service
// identity, whose token lives in this process only. A cross-app one (SEP-990) is per person too, its token got from the
// person's sign-in (src/mcp/cross-app.ts) with no Connect.
import { createHash } from 'node:crypto';
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../shared/messages.ts';
import { type McpServerConfig, isCrossApp, isPerPerson, resolveEnv, withEnv } from './config.ts';
import { CrossAppProvider } from './cross-app.ts';
import { withRefreshLock } from '../db/mcp-oauth.ts';
import { ConnectFirst } from './oauth-errors.ts';
import { type HttpServerConfig, PersonOAuthProvider } from './oauth-provider.ts';
import type { TokenVault } from './token-vault.ts';
import { exposedName } from './names.ts';
import { policyFor } from './policy.ts';
import { toGeminiSchema } from './schema.ts';
import { linearSchemaValidator } from './pattern-check.ts';
import type { McpServerTools, McpToolDescriptor } from './types.ts';

/** Asks the user what the server asked (elicitation), for the call in flight. */
export type Elicit = (request: { message: string; schema: JsonObject }) => Promise<ElicitResult>;

interface Connection {
  client: Client;
  list?: McpServerTools;
  /** bumped by notifications/tools/list_changed */
  listVersion: number;
  /** calls in flight on this connection, newest last: who an elicitation is for */
  calls: { elicit: Elicit }[];
  /** the process died or the session ended: the next use connects again */
  closed: boolean;
  /** a per-person server's: the person's OAuth client */
  provider?: PersonOAuthProvider;
}

/** What the worker needs for servers behind OAuth: the sealed tokens, and the callback URL clients registered with. */
export interface McpOAuthDeps {
  vault: TokenVault;
  redirectUrl: string;
}

/** Refreshed ahead of its expiry by this much, so a call does not start with a token about to lapse. */
const REFRESH_AHEAD_MS = 60_000;
/** A person's session with a per-person server ends after this long unused. */
export const PER_PERSON_IDLE_MS = 10 * 60_000;

const VERSION = '0.1.0';

export class McpConnections {
  readonly #servers: Map<string, McpServerConfig>;
  readonly #open = new Map<string, Promise<Connection>>();
  readonly #oauth: McpOAuthDeps | undefined;
  /** the client-credentials servers' providers: one service identity each, its token in memory */
  readonly #services = new Map<string, OAuthClientProvider>();
  /**
   * Each person's last list of each per-person server: offered while they cannot call it (their refresh failed, a
   * step-up); never another person's, whose list may name what only their account sees.
   */
  readonly #lastLists = new Map<string, McpServerTools>();
  /** refreshes under way, per person and server */
  readonly #refreshing = new Map<string, Promise<void>>();
  /** each open per-person connection and when it was last used: one idle for `idleMs` is closed */
  readonly #lastUsed = new Map<string, { at: number; connection: Connection }>();
  readonly #idleMs: number;
  readonly #sweepEveryMs: number;
  #swept = Date.now();
  #closed = false;

  constructor(servers: readonly McpServerConfig[], oauth?: McpOAuthDeps, options: { idleMs?: number; sweepEveryMs?: number } = {}) {
    this.#servers = new Map(servers.map((server) => [server.name, server]));
    this.#oauth = oauth;
    this.#idleMs = options.idleMs ?? PER_PERSON_IDLE_MS;
    this.#sweepEveryMs = options.sweepEveryMs ?? 60_000;
  }

  /**
   * What a person who cannot call a per-person server now is offered: its tools as their own connection last saw
   * them, else one stand-in tool (`<server>__connect`); a call to either answers "Connect <server> first".
   */
  offeredUnconnected(name: string, user: string | undefined): McpServerTools {
    const last = user ? this.#lastLists.get(this.#key(name, user)) : undefined;
    if (last) return { server: name, hash: '', tools: last.tools };
    const server = this.server(name);
    const standIn = describe(server, {
      name: 'connect',
      description: isCrossApp(server)
        ? `The tools of the MCP server ${name}, which this person's sign-in cannot reach now. Call it to learn what to do.`
        : `The tools of the MCP server ${name}, which this person has not connected yet. Call it to learn how to connect it.`,
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
    });
    return { server: name, hash: '', tools: [{ ...standIn, policy: { ...standIn.policy, approval: false, decisions: [] } }] };
  }

  /** Per-person servers: a connection per person; `user` is the conversation's owner. */
  #key(name: string, user: string | undefined): string {
    if (!isPerPerson(this.server(name))) return name;
    if (!user) throw new Error(`The MCP server ${name} is connected per person: whose call is it?`);
    return `${name}\u0000${user}`;
  }

  /**
   * A per-person server: the person's token is there and fresh (refreshed now when it lapses within a minute),
   * or ConnectFirst, before the server is asked anything.
   */
  async #authorized(name: string, user: string | undefined): Promise<void> {
    const server = this.server(name);
    if (!isPerPerson(server)) return;
    const found = await this.#requireOAuth(name).vault.tokens(user!, name);
    if (isCrossApp(server) ? usable(found) : !needsRefresh(name, found)) return;
    // One refresh per person and server at a time: in this process (a person's conversations list and call
    // together) and across workers (withRefreshLock), where the tokens are read again once the lock is held.
    const key = this.#key(name, user);
    let refreshing = this.#refreshing.get(key);
    if (!refreshing) {
      const renew = isCrossApp(server)
        ? this.#exchange(server as HttpServerConfig, user!)
        : this.#refresh(server as HttpServerConfig, user!);
      refreshing = renew.finally(() => this.#refreshing.delete(key));
      this.#refreshing.set(key, refreshing);
    }
    await refreshing;
  }

  async #refresh(server: HttpServerConfig, user: string): Promise<void> {
    const { vault } = this.#requireOAuth(server.name);
    await withRefreshLock(vault.pool, user, server.name, async () => {
      const found = await vault.tokens(user, server.name);
      if (!needsRefresh(server.name, found)) return;
      const provider = this.#authProvider(server, user, (found!.discovery as OAuthDiscoveryState | null) ?? undefined)!;
      const result = await auth(provider, { serverUrl: server.url }).catch((error: unknown) => {
        // the authorization server's refusal means the person signs in again; a network failure is retried
        if (error instanceof OAuthError) throw new ConnectFirst(server.name, { expired: true });
        throw error;
      });
      if (result !== 'AUTHORIZED') throw new ConnectFirst(server.name, { expired: true });
    });
  }

  /** Cross-app access: a new access token from the person's sign-in (src/mcp/cross-app.ts), one worker at a time. */
  async #exchange(server: HttpServerConfig, user: string): Promise<void> {
    const { vault } = this.#requireOAuth(server.name);
    await withRefreshLock(vault.pool, user, server.name, async () => {
      const found = await vault.tokens(user, server.name);
      if (usable(found)) return;
      const provider = new CrossAppProvider({
        vault,
        server,
        user,
        ...(found?.discovery ? { discovery: found.discovery as unknown as OAuthDiscoveryState } : {}),
      });
      await auth(provider, { serverUrl: server.url }).catch((error: unknown) => {
        // the authorization server's refusal of the ID-JAG: the person's sign-in is what to renew
        if (error instanceof OAuthError)
          throw new ConnectFirst(server.name, { signIn: `its authorization server refused the sign-in's grant (${error.errorCode})` });
        throw error;
      });
    });
  }

  #requireOAuth(name: string): McpOAuthDeps {
    if (!this.#oauth) throw new Error(`The MCP server ${name} is behind OAuth, and this worker has no token store`);
    return this.#oauth;
  }

  /** The provider of a server behind OAuth: the person's, or the service identity's. */
  #authProvider(server: McpServerConfig, user: string | undefined, discovery?: OAuthDiscoveryState): OAuthClientProvider | undefined {
    if (server.transport !== 'http' || server.auth !== 'oauth') return undefined;
    if (isCrossApp(server)) {
      const { vault } = this.#requireOAuth(server.name);
      return new CrossAppProvider({ vault, server, user: user!, ...(discovery ? { discovery } : {}) });
    }
    if (isPerPerson(server)) {
      const { vault, redirectUrl } = this.#requireOAuth(server.name);
      return new PersonOAuthProvider({ vault, server, user: user!, redirectUrl, mode: 'use', ...(discovery ? { discovery } : {}) });
    }
    let provider = this.#services.get(server.name);
    if (!provider) {
      const oauth = server.oauth!;
      provider = oauth.privateKey
        ? new PrivateKeyJwtProvider({
            clientId: oauth.clientId!,
            privateKey: resolveEnv(oauth.privateKey),
            algorithm: oauth.signingAlgorithm,
            ...(oauth.scope ? { scope: oauth.scope } : {}),
          })
        : new ClientCredentialsProvider({
            clientId: oauth.clientId!,
            clientSecret: resolveEnv(oauth.clientSecret ?? ''),
            ...(oauth.scope ? { scope: oauth.scope } : {}),
          });
      this.#services.set(server.name, provider);
    }
    return provider;
  }

  server(name: string): McpServerConfig {
    const server = this.#servers.get(name);
    if (!server) throw new Error(`No MCP server "${name}" in BRIGADE_MCP_CONFIG`);
    return server;
  }

  async #connection(name: string, user?: string): Promise<Connection> {
    if (this.#closed) throw new Error('The worker is stopping');
    const key = this.#key(name, user);
    if (user) this.#sweepIdle();
    let open = this.#open.get(key);
    if (open && (await open.catch(() => undefined))?.closed) {
      if (this.#open.get(key) === open) this.#open.delete(key);
      open = this.#open.get(key);
    }
    if (!open) {
      open = this.#connect(this.server(name), user);
      this.#open.set(key, open);
      // A failed start is forgotten, so the next use (the activity's retry) tries again.
      open.catch(() => this.#open.get(key) === open && this.#open.delete(key));
    }
    const connection = await open;
    if (user) this.#lastUsed.set(key, { at: Date.now(), connection });
    return connection;
  }

  /**
   * A worker serves many people: their sessions with a per-person server end once idle for `idleMs` (none with a
   * call in flight), looked for at most every `sweepEveryMs`; the next use connects again. Marked closed at once,
   * before the session's end is sent, so no use in between picks up a connection that is closing.
   */
  #sweepIdle(): void {
    const now = Date.now();
    if (now - this.#swept < this.#sweepEveryMs) return;
    this.#swept = now;
    for (const [key, { at, connection }] of this.#lastUsed) {
      if (now - at < this.#idleMs || connection.calls.length > 0) continue;
      this.#lastUsed.delete(key);
      // a closed connection is replaced at its next use (#connection)
      connection.closed = true;
      void endSession(connection);
    }
  }

  async #connect(server: McpServerConfig, user: string | undefined): Promise<Connection> {
    // The client checks structuredContent against the tool's outputSchema: with RE2, never a backtracking RegExp.
    const client = new Client(
      { name: 'brigade', version: VERSION },
      // applyDefaults (SEP-1034): an accepted answer carries the schema's defaults for what the person left
      // out; the workflow fills them (src/shared/elicitation-answer.ts) before it checks the answer.
      { capabilities: { elicitation: { form: { applyDefaults: true } } }, jsonSchemaValidator: linearSchemaValidator() },
    );
    const connection: Connection = { client, listVersion: 0, calls: [], closed: false };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      connection.listVersion += 1;
      connection.list = undefined;
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message: string; requestedSchema?: JsonObject; mode?: string };
      const call = connection.calls.at(-1);
      // Only form elicitation during one of our calls can be put to a user; anything else is declined.
      if (!call || (params.mode && params.mode !== 'form')) return { action: 'decline' };
      return call.elicit({ message: params.message, schema: params.requestedSchema ?? { type: 'object', properties: {} } });
    });
    const discovery = isPerPerson(server)
      ? ((await this.#requireOAuth(server.name).vault.tokens(user!, server.name))?.discovery as OAuthDiscoveryState | null | undefined)
      : undefined;
    const authProvider = this.#authProvider(server, user, discovery ?? undefined);
    if (authProvider instanceof PersonOAuthProvider) connection.provider = authProvider;
    const transport =
      server.transport === 'stdio'
        ? new StdioClientTransport({
            command: server.command,
            args: server.args,
            env: { ...getDefaultEnvironment(), ...withEnv(server.env) },
            ...(server.cwd ? { cwd: server.cwd } : {}),
            stderr: 'inherit',
          })
        : new StreamableHTTPClientTransport(new URL(server.url), {
            requestInit: { headers: withEnv(server.headers) },
            ...(authProvider ? { authProvider } : {}),
            // A 403 insufficient_scope (step-up) needs a new authorization by the person, not a refresh of the
            // token that lacks the scope: the provider is told before the SDK asks it for tokens.
            ...(connection.provider ? { fetch: noticeStepUp(connection.provider) } : {}),
          });
    // A process that died or a session that ended is dropped: the next use starts a new one.
    client.onclose = () => {
      connection.closed = true;
    };
    await client.connect(transport, { timeout: server.callTimeout });
    return connection;
  }

  /** The server's tools as the agent sees them, from the cache unless the server said the list changed. */
  async listTools(name: string, user?: string): Promise<McpServerTools> {
    await this.#authorized(name, user);
    const connection = await this.#connection(name, user);
    if (connection.provider) connection.provider.stepUp = undefined;
    if (connection.list) return connection.list;
    const version = connection.listVersion;
    const server = this.server(name);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await connection.client.listTools(cursor ? { cursor } : {}, { timeout: server.callTimeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const descriptors = tools.map((tool) => describe(server, tool));
    const list: McpServerTools = { server: name, hash: hashOf(descriptors), tools: descriptors };
    if (connection.listVersion === version) connection.list = list;
    if (connection.provider) this.#lastLists.set(this.#key(name, user), list);
    return list;
  }

  /** The current list's hash, when known (a list_changed notification forgets it). */
  async currentHash(name: string, user?: string): Promise<string | undefined> {
    const open = this.#open.get(this.#key(name, user));
    const connection = open && (await open.catch(() => undefined));
    if (!connection || connection.closed) return undefined;
    return connection.list?.hash ?? 'changed';
  }

  async callTool(
    name: string,
    request: { tool: string; args: JsonObject; meta: JsonObject },
    options: { signal: AbortSignal; timeoutMs: number; elicit: Elicit; user?: string },
  ): Promise<CallToolResult> {
    await this.#authorized(name, options.user);
    const connection = await this.#connection(name, options.user);
    if (connection.provider) connection.provider.stepUp = undefined;
    const call = { elicit: options.elicit };
    connection.calls.push(call);
    try {
      return (await connection.client.callTool(
        { name: request.tool, arguments: request.args, _meta: request.meta },
        CallToolResultSchema,
        // An elicitation pauses the call on the user: its wait is not the server's slowness.
        { signal: options.signal, timeout: options.timeoutMs, maxTotalTimeout: undefined, resetTimeoutOnProgress: true },
      )) as CallToolResult;
    } finally {
      connection.calls.splice(connection.calls.indexOf(call), 1);
    }
  }

  /** Stops every stdio server and ends every HTTP session. */
  async close(): Promise<void> {
    this.#closed = true;
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(
      open.map(async (opening) => {
        const connection = await opening.catch(() => undefined);
        if (connection) await endSession(connection);
      }),
    );
  }
}

/**
 * Whether a person's tokens need a refresh before a call (true), are fine as they are (false), or cannot be used
 * (ConnectFirst: none, refused before, or lapsing with no refresh token).
 */
function needsRefresh(server: string, found: Awaited<ReturnType<TokenVault['tokens']>>): boolean {
  if (!found) throw new ConnectFirst(server, { missing: true });
  if (found.refreshFailedAt) throw new ConnectFirst(server, { expired: true });
  if (!found.expiresAt || found.expiresAt.getTime() - Date.now() >= REFRESH_AHEAD_MS) return false;
  if (!found.tokens.refresh_token) throw new ConnectFirst(server, { expired: true });
  return true;
}

/** A cross-app server's access token that can be presented as it is (there, not refused, not about to lapse). */
function usable(found: Awaited<ReturnType<TokenVault['tokens']>>): boolean {
  return Boolean(found && !found.refreshFailedAt && (!found.expiresAt || found.expiresAt.getTime() - Date.now() >= REFRESH_AHEAD_MS));
}

/** Ends an HTTP session (DELETE) and closes the client; a stdio server's process stops. */
async function endSession(connection: Connection): Promise<void> {
  const transport = connection.client.transport;
  if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
  await connection.client.close().catch(() => undefined);
}

/** The transport's fetch, noting a step-up's scope (403 insufficient_scope) for the person's provider. */
function noticeStepUp(provider: PersonOAuthProvider): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      if (error === 'insufficient_scope') provider.stepUp = scope ?? 'more access';
    }
    return response;
  };
}

function describe(server: McpServerConfig, tool: Tool): McpToolDescriptor {
  const readOnly = tool.annotations?.readOnlyHint === true;
  const description = [tool.title && tool.title !== tool.name ? tool.title : '', tool.description ?? ''].filter(Boolean).join(': ');
  return {
    name: exposedName(server.name, tool.name),
    server: server.name,
    tool: tool.name,
    description: `${description || tool.name} (MCP server ${server.name})`,
    parameters: toGeminiSchema(tool.inputSchema),
    inputSchema: tool.inputSchema as JsonObject,
    readOnly,
    policy: policyFor(server, tool.name, readOnly),
    callTimeoutMs: server.callTimeout,
    questionDeadlineMs: server.questionDeadline,
    maxAttempts: server.maxAttempts,
  };
}

const hashOf = (descriptors: McpToolDescriptor[]) => createHash('sha256').update(JSON.stringify(descriptors)).digest('hex').slice(0, 16);
