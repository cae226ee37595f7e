import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import express from 'express';
import type pg from 'pg';
import type { Config, TokenGrant } from '../config.ts';
import type { ServerCatalog } from './agent-server.ts';
import { conversationAccess } from './conversation-access.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { authenticate } from './auth.ts';
import { jsonBody } from './body.ts';
import { cors } from './cors.ts';
import { codecServerRoutes } from './codec-server.ts';
import { conversationRoutes } from './conversations.ts';
import { lifecycleRoutes } from './conversation-lifecycle.ts';
import { EventNotifier } from './event-notifier.ts';
import { fileRoutes } from './files.ts';
import { securityHeaders } from './security-headers.ts';
import { healthRoutes } from './health.ts';
import { metaRoutes } from './meta.ts';
import { HttpError, errorHandler } from './http-error.ts';
import { openApiDocument } from './openapi.ts';
import { requestId } from './request-id.ts';
import { metricsHandler, requestMetrics } from './metrics.ts';
import { webAppRoutes } from './web-app.ts';
import { OidcVerifier } from './oidc.ts';
import { TokenStanding, UserLedger } from './users.ts';
import { WebSessions, webSignInRoutes } from './web-sign-in.ts';
import { isCrossApp, loadMcpConfig } from '../mcp/config.ts';
import { SealingUnavailable, TokenVault } from '../mcp/token-vault.ts';
import { mcpFileRoutes } from './mcp-files.ts';
import { mcpOAuthPageRoutes, mcpOAuthRoutes } from './mcp-oauth.ts';
import { personalDataRoutes } from './personal-data-routes.ts';
import { scheduleRoutes } from './schedules.ts';
import { describeError } from '../shared/log-safe.ts';
import { refusalLimits, userRequestLimits } from './request-limits.ts';

export interface AppDeps {
  /** the agents it serves (built at the composition root, src/agents/catalog.ts for the built-in ones) */
  catalog: ServerCatalog;
  config: Config;
  client: Client;
  pool: pg.Pool;
  tokens: Record<string, TokenGrant>;
  checkTemporal: () => Promise<void>;
  log?: (line: string, error?: unknown) => void;
  /** the Temporal Web UI's address, for links from the web client (GET /v1/meta) */
  temporalUiUrl?: string;
  /** the payload codec the Temporal clients use, for the codec server (/codec); none when encryption is off */
  codec?: PayloadCodec;
}

export function createApp({ catalog, config, client, pool, tokens, checkTemporal, log, temporalUiUrl, codec }: AppDeps): express.Express {
  loadMcpConfig(config.BRIGADE_MCP_CONFIG, catalog); // a bad file stops the start, not a conversation
  const app = express();
  app.disable('x-powered-by');
  // an error is logged by its kind, status and code, never its words (src/shared/log-safe.ts)
  const logLine = log ?? ((line, error) => console.error(line, ...(error === undefined ? [] : [describeError(error)])));
  app.use(requestId());
  app.use(securityHeaders(config));
  // before the API's CORS: the codec server answers the Web UI's origin, which the web client's list need not hold
  const uiUrl = temporalUiUrl ?? config.TEMPORAL_UI_URL;
  const ledger = new UserLedger(pool, (line) => logLine(line));
  const oidc =
    config.AUTH_OIDC_ISSUER && config.AUTH_OIDC_AUDIENCE
      ? new OidcVerifier({ ...config, AUTH_OIDC_ISSUER: config.AUTH_OIDC_ISSUER, AUTH_OIDC_AUDIENCE: config.AUTH_OIDC_AUDIENCE }, (line) =>
          logLine(line),
        )
      : undefined;
  const sessions = oidc && config.AUTH_OIDC_CLIENT_ID ? new WebSessions(pool, config) : undefined;
  // at start, unasked: an owner whose API_TOKENS entry is gone loses their keys on every API process now
  const standing = new TokenStanding(pool, tokens, (line) => logLine(line));
  standing
    .ready()
    .catch((error: unknown) => logLine('users: could not record the API_TOKENS standing yet; tried again at the next key', error));
  // refusals count per client address (behind a proxy, TRUST_PROXY makes that the client's, not the proxy's)
  if (config.TRUST_PROXY !== undefined) app.set('trust proxy', trustProxy(config.TRUST_PROXY));
  const frontDoor = refusalLimits(authenticate({ tokens, pool, config, ledger, oidc, sessions, standing }), config);
  app.use(
    '/codec',
    codecServerRoutes({ codec, authenticate: frontDoor, uiOrigins: uiUrl ? [uiUrl] : [], namespace: config.TEMPORAL_NAMESPACE }),
  );
  app.use(cors(config.CORS_ORIGINS));
  app.use(healthRoutes({ pool, checkTemporal, log: (line) => logLine(line) }));
  // unauthenticated like the health routes: serve it on a port only the scraper reaches (docs/operations.md)
  if (config.METRICS_ENABLED) app.get('/metrics', metricsHandler());
  app.use(requestMetrics());
  const document = openApiDocument(catalog, { publicUrl: config.PUBLIC_URL });
  app.get('/openapi.json', (_req, res) => void res.json(document));
  app.use(
    fileRoutes(
      config,
      pool,
      catalog.servers.flatMap((server) => (server.publicFiles ? [server.publicFiles] : [])),
    ),
  );
  app.use(mcpFileRoutes(config));
  app.use(mcpOAuthPageRoutes());
  // cross-app MCP servers (SEP-990) are reached with the person's sign-in: its ID token is kept, sealed, only then
  const vault = loadMcpConfig(config.BRIGADE_MCP_CONFIG, catalog).some(isCrossApp) ? new TokenVault(pool, config) : undefined;
  app.use(
    webSignInRoutes({
      config,
      sessions,
      oidc,
      ledger,
      log: (line) => logLine(line),
      ...(vault ? { keepIdToken: keepIdTokenWith(vault, logLine) } : {}),
    }),
  );
  // one ownership-and-role rule for every conversation route, the agents' included
  const access = conversationAccess(catalog, pool);
  // The token is checked before the body is read, so an anonymous client cannot make us inflate anything.
  app.use(
    '/v1',
    frontDoor,
    userRequestLimits(config),
    jsonBody(),
    metaRoutes({ catalog, config, temporalUiUrl }),
    apiKeyRoutes({ pool }),
    conversationRoutes({ catalog, access, config, client, pool, notifier: new EventNotifier(pool), log: logLine }),
    lifecycleRoutes({ access, config, client, pool, log: logLine }),
    personalDataRoutes({ catalog, config, client, pool, log: logLine }),
    scheduleRoutes({ catalog, access, config, client, pool }),
    mcpOAuthRoutes({ catalog, config, pool }),
    // each agent's own routes, in the catalog's order, under the same access rule
    ...catalog.servers.flatMap((server) => (server.routes ? [server.routes({ config, client, pool, access })] : [])),
  );
  app.use(webAppRoutes());
  app.use((_req, _res, next) => next(new HttpError(404, 'No such route')));
  app.use(errorHandler(logLine));
  return app;
}

/** TRUST_PROXY as Express takes it: true, false, a number of hops, or addresses and subnets. */
function trustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** Sign-in goes on when the ID token cannot be sealed (no payload encryption): the cross-app call then says so. */
const keepIdTokenWith = (vault: TokenVault, logLine: (line: string) => void) => async (user: string, idToken: string) => {
  try {
    await vault.saveIdToken(user, idToken);
  } catch (error) {
    if (!(error instanceof SealingUnavailable)) throw error;
    logLine(`web sign-in: the ID token is not kept for cross-app MCP servers: ${error.message}`);
  }
};
