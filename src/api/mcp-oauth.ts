// A person's MCP servers behind OAuth (issue 47): which servers there are and whether they connected each
// (GET /v1/mcp/servers), Connect (POST /v1/mcp/servers/{name}/connect: the authorization URL for their browser),
// the callback (GET /v1/mcp/oauth/callback: the code traded for tokens, by the person who started it, once) and
// Disconnect (DELETE /v1/mcp/servers/{name}/connection: revoked at the provider, forgotten here). The
// authorization server sends the browser to the page route /mcp/oauth/callback, which hands code and state to
// the web client in the URL's fragment (never sent to a server, so no log or Referer holds the code), and the web
// client calls the API's callback with its own credentials.
import { type Request, type Response, Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import { loadMcpConfig } from '../mcp/config.ts';
import { CALLBACK_PATH, ConnectError, McpOAuth, oauthRedirectUrl } from '../mcp/oauth-connect.ts';
import { SealingUnavailable, TokenVault } from '../mcp/token-vault.ts';
import { connectedServers } from '../db/mcp-oauth.ts';
import type { PersonalDataKind } from '../protection/personal-data.ts';
import { principalOf } from './auth.ts';
import { HttpError, parseBody } from './http-error.ts';

export const McpServerStatus = z.object({
  name: z.string(),
  auth: z.enum(['none', 'oauth']),
  perPerson: z
    .boolean()
    .describe(
      "each person connects it (OAuth authorization code); false: no authorization, a service identity, or cross-app access (reached with the person's sign-in, no Connect)",
    ),
  connected: z.boolean().optional().describe('per-person servers: whether the signed-in person has connected it'),
  connectedAt: z.string().optional(),
  wantedScope: z.string().optional().describe('a call was refused for want of this scope: the next Connect asks for it'),
  expired: z.boolean().optional().describe('the authorization server refused to renew the sign-in: connect again'),
  agents: z.array(z.string()),
});
export const McpServerList = z.object({ servers: z.array(McpServerStatus) });
export const McpConnectStarted = z.object({
  authorizationUrl: z.string().describe("where the person's browser goes to consent; it comes back to /mcp/oauth/callback"),
});
export const McpConnected = z.object({ server: z.string(), connected: z.literal(true) });
export const McpDisconnected = z.object({
  disconnected: z.boolean().describe('the person had tokens for it, and they are deleted'),
  revoked: z.boolean().describe('the authorization server has a revocation endpoint and accepted the revocation'),
});

const ServerParam = z.object({ name: z.string().min(1).max(32) });
const CallbackQuery = z.union([
  z.object({ code: z.string().min(1).max(4096), state: z.string().min(1).max(512) }),
  z.object({ error: z.string().max(200), error_description: z.string().max(1000).optional(), state: z.string().max(512).optional() }),
]);

type OAuthConfig = Pick<
  Config,
  | 'BRIGADE_MCP_CONFIG'
  | 'PUBLIC_URL'
  | 'HOST'
  | 'PORT'
  | 'PAYLOAD_ENCRYPTION'
  | 'PAYLOAD_ENCRYPTION_KEYS'
  | 'PAYLOAD_ENCRYPTION_KEY_ID'
  | 'DATABASE_URL'
  | 'TEMPORAL_ADDRESS'
>;

export const mcpOAuthOf = (catalog: Pick<AgentCatalog, 'has' | 'names'>, config: OAuthConfig, pool: pg.Pool) =>
  new McpOAuth(loadMcpConfig(config.BRIGADE_MCP_CONFIG, catalog), new TokenVault(pool, config), oauthRedirectUrl(config));

function asHttp(error: unknown): unknown {
  if (error instanceof ConnectError) return new HttpError(error.status, error.message);
  if (error instanceof SealingUnavailable) return new HttpError(503, error.message);
  return error;
}

/** The /v1 routes (behind the front door). */
export function mcpOAuthRoutes(deps: { catalog: Pick<AgentCatalog, 'has' | 'names'>; config: OAuthConfig; pool: pg.Pool }): Router {
  const router = Router();
  const oauth = mcpOAuthOf(deps.catalog, deps.config, deps.pool);
  const handle = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (error) {
      throw asHttp(error);
    }
  };

  router.get(
    '/mcp/servers',
    handle(async (_req, res) => {
      res.json({ servers: await oauth.list(principalOf(res).user) });
    }),
  );

  router.post(
    '/mcp/servers/:name/connect',
    handle(async (req, res) => {
      const { name } = parseBody(ServerParam, req.params);
      res.setHeader('Cache-Control', 'no-store');
      res.json(await oauth.connect(principalOf(res).user, name));
    }),
  );

  router.get(
    '/mcp/oauth/callback',
    handle(async (req, res) => {
      const query = parseBody(CallbackQuery, req.query);
      if ('error' in query) {
        throw new HttpError(
          400,
          `The authorization server did not authorize: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`,
        );
      }
      const { server } = await oauth.finish(principalOf(res).user, query.code, query.state);
      res.setHeader('Cache-Control', 'no-store');
      res.json({ server, connected: true });
    }),
  );

  router.delete(
    '/mcp/servers/:name/connection',
    handle(async (req, res) => {
      const { name } = parseBody(ServerParam, req.params);
      res.json(await oauth.disconnect(principalOf(res).user, name));
    }),
  );

  return router;
}

/** The page the authorization server sends the browser back to: code and state go on to the web client, in the fragment. */
export function mcpOAuthPageRoutes(): Router {
  const router = Router();
  router.get(CALLBACK_PATH, (req, res) => {
    const query = new URLSearchParams();
    for (const key of ['code', 'state', 'error', 'error_description']) {
      const value = req.query[key];
      if (typeof value === 'string') query.set(key, value.slice(0, 4096));
    }
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.redirect(303, `/#mcp-oauth?${query.toString()}`);
  });
  return router;
}

/** A person's MCP connections: which servers (never a token) in the export; revoked and deleted at erasure, before their key goes. */
export const mcpConnectionsKind = (catalog: Pick<AgentCatalog, 'has' | 'names'>): PersonalDataKind => ({
  name: 'mcpConnections',
  // before dataKey (-1000): revoking needs the tokens, which the key opens
  order: -1100,
  async export({ pool, user }) {
    const connected = await connectedServers(pool, user);
    return [...connected].map(([server, { connectedAt }]) => ({ server, connectedAt: connectedAt.toISOString() }));
  },
  async erase({ pool, user, config }) {
    return mcpOAuthOf(catalog, config, pool).erase(user);
  },
});
