// A small issue tracker's MCP server behind OAuth, as the hosted ones are: one loopback HTTP server that is both
// the authorization server (RFC 8414 metadata, dynamic registration, a consent page, authorization code with PKCE
// S256 and a resource indicator, refresh with rotation, revocation) and the protected resource (RFC 9728
// metadata, 401 with WWW-Authenticate, an MCP server whose `whoami` tool says whose token called it). The
// consent page asks who the person is at the tracker (a name), so a test can tell which person's token a call
// carried. Everything it issued and saw is kept for the test to check.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

interface Grant {
  subject: string;
  clientId: string;
  scope: string;
  access: string;
  refresh: string;
  accessExpiresAt: number;
  revoked: boolean;
}

export interface TrackerCall {
  tool: string;
  subject: string;
  token: string;
}

export interface Tracker {
  /** the MCP endpoint */
  url: string;
  origin: string;
  /** every grant issued (each refresh makes a new one of the same subject) */
  grants: Grant[];
  calls: TrackerCall[];
  /** MCP sessions begun and ended (a client's DELETE) */
  sessionsOpened: number;
  sessionsEnded: number;
  refreshes: number;
  /** refresh requests refused (a rotated or revoked refresh token, or refuseRefresh) */
  refusedRefreshes: number;
  /** token values revoked at /revoke */
  revocations: string[];
  /** seconds an access token lives (default 3600) */
  accessTtlSeconds: number;
  /** refresh requests answered invalid_grant */
  refuseRefresh: boolean;
  /** how long a refresh takes to answer (a slow provider widens the window two refreshes can overlap in) */
  refreshDelayMs: number;
  /** every token value it ever issued, access and refresh */
  allTokens(): string[];
  close(): Promise<void>;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startTracker(): Promise<Tracker> {
  const clients = new Map<string, { redirectUris: string[] }>();
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string; resource: string; scope: string; subject: string; used: boolean }
  >();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let origin = '';
  const tracker: Tracker = {
    url: '',
    origin: '',
    grants: [],
    calls: [],
    sessionsOpened: 0,
    sessionsEnded: 0,
    refreshes: 0,
    refusedRefreshes: 0,
    revocations: [],
    accessTtlSeconds: 3600,
    refuseRefresh: false,
    refreshDelayMs: 0,
    allTokens: () => tracker.grants.flatMap((grant) => [grant.access, grant.refresh]),
    close: async () => undefined,
  };

  const issue = (subject: string, clientId: string, scope: string): Grant => {
    const grant: Grant = {
      subject,
      clientId,
      scope,
      access: `tat-${randomBytes(24).toString('base64url')}`,
      refresh: `trt-${randomBytes(24).toString('base64url')}`,
      accessExpiresAt: Date.now() + tracker.accessTtlSeconds * 1000,
      revoked: false,
    };
    tracker.grants.push(grant);
    return grant;
  };
  const tokenAnswer = (grant: Grant) => ({
    access_token: grant.access,
    token_type: 'Bearer',
    expires_in: tracker.accessTtlSeconds,
    refresh_token: grant.refresh,
    scope: grant.scope,
  });

  const buildServer = () => {
    const server = new McpServer({ name: 'tracker', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'Who the tracker knows you as.', inputSchema: {}, annotations: { readOnlyHint: true } },
      async (_args, extra) => {
        const subject = String(extra.authInfo?.extra?.subject);
        tracker.calls.push({ tool: 'whoami', subject, token: extra.authInfo!.token });
        return { content: [{ type: 'text', text: `Signed in at the tracker as ${subject}.` }] };
      },
    );
    return server;
  };

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));

  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString();
    const form = new URLSearchParams(req.headers['content-type']?.includes('application/x-www-form-urlencoded') ? raw : '');
    const resourceMetadata = `${origin}/.well-known/oauth-protected-resource/mcp`;

    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      return json(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin], scopes_supported: ['tracker.read'] });
    }
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        revocation_endpoint: `${origin}/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        scopes_supported: ['tracker.read', 'offline_access'],
      });
    }
    if (req.method === 'POST' && url.pathname === '/register') {
      const body = JSON.parse(raw || '{}');
      const clientId = `tracker-client-${randomUUID()}`;
      clients.set(clientId, { redirectUris: body.redirect_uris ?? [] });
      return json(res, 201, { ...body, client_id: clientId, token_endpoint_auth_method: 'none' });
    }
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const q = url.searchParams;
      const client = clients.get(q.get('client_id') ?? '');
      if (!client || !client.redirectUris.includes(q.get('redirect_uri') ?? '')) return json(res, 400, { error: 'invalid_client' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return json(res, 400, { error: 'invalid_request' });
      if (q.get('resource') !== `${origin}/mcp`) return json(res, 400, { error: 'invalid_target' });
      const hidden = [...q].map(([key, value]) => `<input type="hidden" name="${escapeHtml(key)}" value="${escapeHtml(value)}">`).join('');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Tracker: sign in</title>
<h1>Tracker</h1><p>Brigade asks to use the tracker as you (${escapeHtml(q.get('scope') ?? '')}).</p>
<form method="post" action="/authorize">${hidden}
<label>Your tracker name <input name="user" required></label>
<button name="decision" value="allow">Allow</button> <button name="decision" value="deny">Deny</button></form>`);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/authorize') {
      const back = new URL(form.get('redirect_uri') ?? '');
      if (form.get('state')) back.searchParams.set('state', form.get('state')!);
      if (form.get('decision') !== 'allow') {
        back.searchParams.set('error', 'access_denied');
      } else {
        const code = `code-${randomBytes(16).toString('base64url')}`;
        codes.set(code, {
          clientId: form.get('client_id')!,
          redirectUri: form.get('redirect_uri')!,
          challenge: form.get('code_challenge')!,
          resource: form.get('resource')!,
          scope: form.get('scope') ?? '',
          subject: form.get('user') ?? 'nobody',
          used: false,
        });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      if (form.get('grant_type') === 'authorization_code') {
        const code = codes.get(form.get('code') ?? '');
        if (
          !code ||
          code.used ||
          code.clientId !== form.get('client_id') ||
          code.redirectUri !== form.get('redirect_uri') ||
          s256(form.get('code_verifier') ?? '') !== code.challenge ||
          code.resource !== form.get('resource')
        )
          return json(res, 400, { error: 'invalid_grant' });
        code.used = true;
        return json(res, 200, tokenAnswer(issue(code.subject, code.clientId, code.scope)));
      }
      if (form.get('grant_type') === 'refresh_token') {
        if (tracker.refreshDelayMs) await new Promise((resolve) => setTimeout(resolve, tracker.refreshDelayMs));
        const old = tracker.grants.find((grant) => grant.refresh === form.get('refresh_token'));
        if (!old || old.revoked || tracker.refuseRefresh) {
          tracker.refusedRefreshes += 1;
          return json(res, 400, { error: 'invalid_grant' });
        }
        tracker.refreshes += 1;
        old.revoked = true; // rotation: the old refresh token and its access token stop working
        return json(res, 200, tokenAnswer(issue(old.subject, old.clientId, old.scope)));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (req.method === 'POST' && url.pathname === '/revoke') {
      const token = form.get('token') ?? '';
      tracker.revocations.push(token);
      for (const grant of tracker.grants) if (grant.access === token || grant.refresh === token) grant.revoked = true;
      return void res.writeHead(200).end();
    }
    if (url.pathname === '/mcp') {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const grant = bearer ? tracker.grants.find((candidate) => candidate.access === bearer) : undefined;
      if (!grant || grant.revoked || grant.accessExpiresAt < Date.now()) {
        return json(
          res,
          401,
          { error: 'invalid_token' },
          {
            'www-authenticate': `Bearer resource_metadata="${resourceMetadata}", scope="tracker.read"${bearer ? ', error="invalid_token"' : ''}`,
          },
        );
      }
      (req as http.IncomingMessage & { auth?: unknown }).auth = {
        token: bearer,
        clientId: grant.clientId,
        scopes: grant.scope.split(' '),
        extra: { subject: grant.subject },
      };
      const body = raw ? JSON.parse(raw) : undefined;
      const sessionId = req.headers['mcp-session-id'] as string | undefined;
      let transport = sessionId ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId || req.method !== 'POST') return void res.writeHead(404).end();
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            tracker.sessionsOpened += 1;
            sessions.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId && sessions.delete(created.sessionId)) tracker.sessionsEnded += 1;
        };
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    // a browser on the consent page asks for this; a 404 would be an error in its console
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  tracker.origin = origin;
  tracker.url = `${origin}/mcp`;
  tracker.close = async () => {
    for (const transport of sessions.values()) await transport.close().catch(() => undefined);
    httpServer.closeAllConnections();
    await new Promise((resolve) => httpServer.close(resolve));
  };
  return tracker;
}
