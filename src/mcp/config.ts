// BRIGADE_MCP_CONFIG: which MCP servers the worker connects to, which agents may use each, and how their
// tools are gated. The `mcpServers` object is the one MCP clients share (`command`/`args`/`env` for stdio,
// `url`/`headers` for Streamable HTTP), with Brigade's own fields beside them. Read once per path and
// validated with zod; a bad file throws a message naming the field, so the process does not start.
// Secrets stay out of the file: `${NAME}` in `env` and `headers` values is read from the environment when
// the server is connected, and never written to logs or history.
import fs from 'node:fs';
import { z } from 'zod';
import { duration } from '../shared/duration.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import { AgentName } from '../shared/messages.ts';
import { TimeoutAction } from '../shared/tool-spec.ts';

export const Approval = z.enum(['always', 'never', 'unless-read-only']);
export type Approval = z.infer<typeof Approval>;

const ToolOverride = z.strictObject({
  approval: Approval.optional(),
  /** how long the approval waits (a duration: 30s, 5m) */
  deadline: duration.optional(),
  timeoutAction: TimeoutAction.optional(),
  decisions: z
    .array(z.enum(['approve', 'reject', 'edit']))
    .min(1)
    .optional(),
});
export type ToolOverride = z.infer<typeof ToolOverride>;

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The fields every server has; `agents` must name agents of the process's catalog. */
const commonFields = (catalog: Pick<AgentCatalog, 'has'>) => ({
  agents: z
    .array(AgentName.refine((name) => catalog.has(name), 'must name an agent of the catalog'))
    .min(1, 'must name at least one agent'),
  approval: Approval.default('unless-read-only'),
  tools: z.record(z.string(), ToolOverride).default({}),
  /** how long an elicitation (a question to the user) waits before the server is told it was cancelled */
  questionDeadline: duration.default(10 * 60_000),
  /** how long the server may work on one call; a question (elicitation) stops the clock until it is answered */
  callTimeout: duration.default(60_000),
  /** attempts per call when the server cannot be reached (a tool error is a result, never retried) */
  maxAttempts: z.number().int().min(1).max(10).default(3),
  /** attempts per call when the server does not answer within callTimeout (at most maxAttempts): it may still be working on the last one */
  timeoutAttempts: z.number().int().min(1).max(10).default(1),
});

const stdioServer = (catalog: Pick<AgentCatalog, 'has'>) =>
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    ...commonFields(catalog),
  });
/**
 * The identity provider of enterprise-managed authorization (`grant: "cross_app"`, SEP-990): its token endpoint
 * exchanges a person's ID token for an ID-JAG (RFC 8693). `clientSecret` is a `${NAME}` reference.
 */
const IdentityProvider = z.strictObject({
  tokenEndpoint: z.url({ error: 'must be an http(s) URL', protocol: /^https?$/ }),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
});

/**
 * MCP authorization (OAuth 2.1, as the MCP specification has it) for an HTTP server with `auth: "oauth"`: by
 * default each person connects it for themselves (authorization code with PKCE); `grant: "client_credentials"`
 * makes Brigade one service identity for everyone; `grant: "cross_app"` (enterprise-managed authorization, SEP-990)
 * reaches it as the conversation's owner with no Connect: their sign-in's ID token is exchanged at `idp` for an
 * ID-JAG, which the server's authorization server takes with the JWT bearer grant (RFC 7523, client_secret_basic).
 * Registration is the configured client (pre-registration), else a client ID metadata document
 * (`clientMetadataUrl`, when the authorization server supports it), else dynamic registration. `clientSecret` and
 * `privateKey` are `${NAME}` references, read when used.
 */
export const OAuthSettings = z
  .strictObject({
    grant: z.enum(['authorization_code', 'client_credentials', 'cross_app']).default('authorization_code'),
    clientId: z.string().min(1).optional(),
    clientSecret: z.string().min(1).optional(),
    /** a PEM private key (private_key_jwt, client_credentials only) */
    privateKey: z.string().min(1).optional(),
    /** the JWS algorithm of privateKey's assertions */
    signingAlgorithm: z.string().min(1).default('ES256'),
    /** asked for when neither the server (WWW-Authenticate) nor its metadata names a scope */
    scope: z.string().min(1).optional(),
    clientMetadataUrl: z.url({ error: 'must be an https URL with a path', protocol: /^https$/ }).optional(),
    /** cross_app: the identity provider that issues ID-JAGs */
    idp: IdentityProvider.optional(),
  })
  .refine((oauth) => oauth.grant !== 'client_credentials' || (oauth.clientId && (oauth.clientSecret || oauth.privateKey)), {
    error: 'client_credentials needs clientId and clientSecret or privateKey',
  })
  .refine((oauth) => oauth.grant !== 'cross_app' || (oauth.idp && oauth.clientId && oauth.clientSecret), {
    error: 'cross_app needs idp, clientId and clientSecret',
  })
  .refine((oauth) => oauth.grant === 'cross_app' || !oauth.idp, { error: 'idp is only for "grant": "cross_app"' });
export type OAuthSettings = z.infer<typeof OAuthSettings>;

const httpServer = (catalog: Pick<AgentCatalog, 'has'>) =>
  z.strictObject({
    url: z.url({ error: 'must be an http(s) URL', protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).default({}),
    /** "oauth": the server is behind MCP authorization (see oauth) */
    auth: z.enum(['none', 'oauth']).default('none'),
    oauth: OAuthSettings.optional(),
    ...commonFields(catalog),
  });
export type StdioServer = z.infer<ReturnType<typeof stdioServer>>;
export type HttpServer = z.infer<ReturnType<typeof httpServer>>;
export type McpServerConfig = (StdioServer & { name: string; transport: 'stdio' }) | (HttpServer & { name: string; transport: 'http' });

/** Server names become tool-name prefixes (`<server>__<tool>`), so they keep to what function names allow. */
const SERVER_NAME = /^[A-Za-z][A-Za-z0-9-]{0,31}$/;

const McpFile = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

export class McpConfigError extends Error {
  override name = 'McpConfigError';
}

const where = (path: PropertyKey[]) => path.map(String).join('.') || '(file)';
const issues = (prefix: PropertyKey[], error: z.ZodError) =>
  error.issues.map((issue) => `${where([...prefix, ...issue.path])}: ${issue.message}`).join('; ');

/** Parses the file's text; throws McpConfigError naming each bad field. `env` is where `${NAME}` must resolve. */
export function parseMcpConfig(text: string, catalog: Pick<AgentCatalog, 'has'>, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  const StdioServer = stdioServer(catalog);
  const HttpServer = httpServer(catalog);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`not JSON (${(error as Error).message})`);
  }
  const file = McpFile.safeParse(raw);
  if (!file.success) throw new McpConfigError(issues([], file.error));
  const servers: McpServerConfig[] = [];
  const problems: string[] = [];
  for (const [name, value] of Object.entries(file.data.mcpServers)) {
    if (!SERVER_NAME.test(name)) {
      problems.push(`mcpServers.${name}: a server name is a letter then letters, digits or "-", at most 32 characters`);
      continue;
    }
    const isStdio = value !== null && typeof value === 'object' && 'command' in value;
    const isHttp = value !== null && typeof value === 'object' && 'url' in value;
    if (!isStdio && !isHttp) {
      problems.push(`mcpServers.${name}: needs "command" (a stdio server) or "url" (a Streamable HTTP server)`);
      continue;
    }
    const parsed = isStdio ? StdioServer.safeParse(value) : HttpServer.safeParse(value);
    if (!parsed.success) {
      problems.push(issues(['mcpServers', name], parsed.error));
      continue;
    }
    const http = parsed.data as HttpServer;
    const secrets: [string, Record<string, string | undefined>][] = isStdio
      ? [['env', (parsed.data as StdioServer).env]]
      : [
          ['headers', http.headers],
          ['oauth', { clientSecret: http.oauth?.clientSecret, privateKey: http.oauth?.privateKey }],
          ['oauth.idp', { clientSecret: http.oauth?.idp?.clientSecret }],
        ];
    for (const [field, values] of secrets) {
      for (const [key, template] of Object.entries(values)) {
        for (const [, variable] of (template ?? '').matchAll(ENV_REF)) {
          if (env[variable!] === undefined) {
            problems.push(`mcpServers.${name}.${field}.${key}: environment variable ${variable} is not set`);
          }
        }
      }
    }
    if (!isStdio && http.oauth && http.auth !== 'oauth') {
      problems.push(`mcpServers.${name}.oauth: needs "auth": "oauth"`);
      continue;
    }
    servers.push({ ...(parsed.data as any), name, transport: isStdio ? 'stdio' : 'http' });
  }
  if (problems.length) throw new McpConfigError(problems.join('; '));
  return servers;
}

/** One `${NAME}` template resolved (see withEnv). */
export const resolveEnv = (template: string, env: NodeJS.ProcessEnv = process.env) =>
  template.replace(ENV_REF, (_, name: string) => env[name] ?? '');

/** Whether the server is called with each person's own token (authorization code, or cross-app access). */
export const isPerPerson = (server: McpServerConfig): boolean =>
  server.transport === 'http' && server.auth === 'oauth' && (server.oauth?.grant ?? 'authorization_code') !== 'client_credentials';

/** Whether a person's token comes from their sign-in (cross-app access), not from a Connect of their own. */
export const isCrossApp = (server: McpServerConfig): boolean =>
  server.transport === 'http' && server.auth === 'oauth' && server.oauth?.grant === 'cross_app';

/** `${NAME}` replaced by the environment's value; only when connecting, never stored. */
export function withEnv(values: Record<string, string>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([key, template]) => [key, template.replace(ENV_REF, (_, name: string) => env[name] ?? '')]),
  );
}

const loaded = new Map<string, McpServerConfig[]>();

/** The servers BRIGADE_MCP_CONFIG names (none without it); read and checked once per path and catalog. */
export function loadMcpConfig(path: string | undefined, catalog: Pick<AgentCatalog, 'has' | 'names'>): McpServerConfig[] {
  if (!path) return [];
  const key = `${catalog.names().join(',')}\n${path}`;
  let servers = loaded.get(key);
  if (!servers) {
    let text: string;
    try {
      text = fs.readFileSync(path, 'utf8');
    } catch (error) {
      throw new McpConfigError(`BRIGADE_MCP_CONFIG: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    try {
      servers = parseMcpConfig(text, catalog);
    } catch (error) {
      throw new McpConfigError(`BRIGADE_MCP_CONFIG (${path}): ${(error as Error).message}`);
    }
    loaded.set(key, servers);
  }
  return servers;
}

/** What a new conversation's input says of MCP: the servers of its agent, or nothing when it has none. */
export function mcpInput(path: string | undefined, catalog: Pick<AgentCatalog, 'has' | 'names'>, agent: string): { mcpServers?: string[] } {
  const servers = mcpServersFor(path, catalog, agent);
  return servers.length ? { mcpServers: servers } : {};
}

/** The names of the servers an agent may use, in the file's order. */
export function mcpServersFor(path: string | undefined, catalog: Pick<AgentCatalog, 'has' | 'names'>, agent: string): string[] {
  return loadMcpConfig(path, catalog)
    .filter((server) => (server.agents as string[]).includes(agent))
    .map((server) => server.name);
}
