import { z } from 'zod';
import { normalizeClientId } from './shared/client-id.ts';
import { duration } from './shared/duration.ts';
import { MODEL_SETTINGS } from './model/model-settings.ts';
import { parseModelPrices } from './model/prices.ts';
import { emptyAsUndefined, optionalUrl, positiveInt } from './shared/setting-schemas.ts';

const port = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a whole number')
    .min(1, 'must be between 1 and 65535')
    .max(65535, 'must be between 1 and 65535')
    .default(fallback);

// One entry per token so a leaked token can be revoked alone; roles gate agents (an agent's requiredRole).
export const TokenGrant = z.object({
  user: z.string().min(1),
  roles: z.array(z.string()).default([]),
  client: z.string().transform(normalizeClientId).optional(),
});
export type TokenGrant = z.infer<typeof TokenGrant>;

const apiTokens = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON: {"<token>": {"user": "...", "roles": [...]}}' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), TokenGrant))
  // A provider's people are 'oidc:…' (src/api/oidc.ts); a token user with that name could meet one of them.
  .refine(
    (tokens) => Object.values(tokens).every((grant) => !grant.user.startsWith('oidc:')),
    'a user name may not start with "oidc:", which names people signed in through AUTH_OIDC_ISSUER',
  )
  // Checked here rather than as a key schema: zod names a failing key in its issue path, which would
  // print the rejected secret at start-up.
  .superRefine((tokens, ctx) => {
    Object.keys(tokens).forEach((token, index) => {
      if (token.length < 16) ctx.addIssue({ code: 'custom', message: `token #${index + 1} is shorter than 16 characters` });
    });
  })
  .optional();

// Checked without naming a key's value: an issue that quoted it would print the secret at start-up.
const payloadKeys = z
  .string()
  .transform((text, ctx) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON: {"<key id>": "<base64 of 32 bytes>"}' });
      return z.NEVER;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || Object.keys(parsed).length === 0) {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object with at least one key id' });
      return z.NEVER;
    }
    const keys: Record<string, Uint8Array> = {};
    for (const [id, value] of Object.entries(parsed as Record<string, unknown>)) {
      const bytes = typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : undefined;
      if (!/^[\w.-]{1,100}$/.test(id)) ctx.addIssue({ code: 'custom', message: 'key ids are letters, digits, ".", "-" and "_"' });
      else if (!bytes || bytes.length !== 32)
        ctx.addIssue({ code: 'custom', message: `key "${id}" must be the base64 of 32 random bytes (openssl rand -base64 32)` });
      else keys[id] = new Uint8Array(bytes);
    }
    return keys;
  })
  .optional();

export const ConfigSchema = z.object({
  PORT: port(3000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),

  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  EMBEDDED_PG_PORT: port(5433),

  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s/:]+:\d+$/, 'must be host:port')
    .optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('brigade'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_DEV_PORT: port(7233),
  TEMPORAL_UI_PORT: port(8233),
  TEMPORAL_UI_URL: optionalUrl,
  /** a workflow bundle built ahead of time (images, tests); without it the worker bundles at start */
  WORKFLOW_BUNDLE_PATH: z.string().optional(),
  /**
   * Worker Deployment Versioning (docs/operations.md#upgrades): the deployment this worker belongs to. Unset, the
   * worker is unversioned (the tests); npm start, the cluster and docker-compose set it.
   */
  WORKER_DEPLOYMENT_NAME: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^:\s]+$/, 'no spaces or colons')
      .optional(),
  ),
  /** this worker's build id; default: the package version and a hash of the workflow bundle, so new workflow code is a new version */
  WORKER_BUILD_ID: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^:\s]+$/, 'no spaces or colons')
      .optional(),
  ),
  /**
   * pinned: a conversation stays on the version it started on until it continues as new (production: the old
   * version drains); auto-upgrade: it moves at its next workflow task (npm start, where the old worker is gone)
   */
  WORKER_VERSIONING_BEHAVIOR: z.enum(['pinned', 'auto-upgrade']).default('pinned'),
  /**
   * once it polls, make this worker's version the current one: always (npm start), if-none (only the first
   * deploy; later ones follow the handbook's ramp), never
   */
  WORKER_SET_CURRENT: z.enum(['always', 'if-none', 'never']).default('if-none'),
  /** a JSON file of MCP servers whose tools agents may use (docs/agents/mcp.md) */
  BRIGADE_MCP_CONFIG: z.preprocess(emptyAsUndefined, z.string().optional()),

  ...MODEL_SETTINGS,
  MODEL_MAX_ATTEMPTS: positiveInt(5),
  /**
   * How long a model step runs within its workflow task before it moves to an activity of its own on the
   * worker's own task queue (src/activities/step-handoff.ts), where operators see it and its history stays
   * flat however long it streams. Under the task's 4 s deadline, whose heartbeat comes at 3.2 s.
   */
  MODEL_STEP_HANDOFF_AFTER: duration.default(2000).refine((ms) => ms >= 100 && ms <= 3000, 'must be between 100ms and 3s'),

  API_TOKENS: apiTokens,

  /**
   * OpenID Connect (issue 34, docs/operations.md#sign-in): with an issuer and an audience the API takes the
   * provider's JWT access tokens; with a client id too, the web client signs in through the server.
   */
  AUTH_OIDC_ISSUER: optionalUrl,
  AUTH_OIDC_AUDIENCE: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** the claim whose string array (or space-separated string) holds the roles; a dotted path reaches into objects */
  AUTH_OIDC_ROLES_CLAIM: z.string().min(1).default('roles'),
  /** the claim that names the bar (beer client) a person acts for; unset: none */
  AUTH_OIDC_CLIENT_CLAIM: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** clock skew allowed on exp, nbf and iat (a token issued further in the future is refused) */
  AUTH_OIDC_CLOCK_SKEW: duration.default(30_000),
  /** a token issued longer ago than this is refused, whatever its exp (its iat is then required); unset: off */
  AUTH_OIDC_MAX_TOKEN_AGE: z.preprocess(emptyAsUndefined, duration.optional()),
  /** a token signed with a key we do not hold fetches the issuer's keys again at most this often */
  AUTH_OIDC_UNKNOWN_KID_REFETCH: duration.default(5_000),
  AUTH_OIDC_CLIENT_ID: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** unset: a public client (PKCE alone) */
  AUTH_OIDC_CLIENT_SECRET: z.preprocess(emptyAsUndefined, z.string().optional()),
  AUTH_OIDC_SCOPES: z.string().default('openid profile email'),
  /** the authorization request parameter that asks for AUTH_OIDC_AUDIENCE: resource (RFC 8707), audience (Auth0), or unset */
  AUTH_OIDC_AUDIENCE_PARAM: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[a-z_]+$/, 'must be a parameter name such as resource or audience')
      .optional(),
  ),
  /** how long a web sign-in lasts */
  AUTH_SESSION_TTL: duration.default(12 * 3600_000),
  /** an API key stops working when its owner has not been seen (signed in or used a token) for this long */
  AUTH_API_KEY_OWNER_UNSEEN: duration.default(30 * 86_400_000),

  AGENT_MAX_STEPS: positiveInt(8),
  AGENT_MAX_TOOL_ERRORS: positiveInt(3),
  APPROVAL_TIMEOUT: duration.default(24 * 3600_000),
  /**
   * A worker that does not hold a conversation in its cache (after a restart or an eviction) replays its run
   * within one workflow task, and the task times out after 4 s (CHAT_SESSION_TASK_TIMEOUT). Replay takes about
   * 1 ms per history event (0.3 s plus 3.8 s for a run of 600 lookup turns, 3,606 events, on a quiet core),
   * so a run ends after 100 turns; 0 leaves it to the server's suggestion (about 4,000 events).
   */
  CONTINUE_AS_NEW_AFTER_TURNS: z.coerce.number().int().min(0).default(100),
  /**
   * The model step runs the tools that need no person itself and asks the model again, so a lookup turn is
   * one activity (one workflow task less per tool round); false shows each such tool as a local activity of its own.
   */
  INLINE_TOOLS: z.stringbool().default(true),

  /**
   * Token budgets (issue 22), counted from the model's own usage metadata (model_usage): a conversation's,
   * and a user's per UTC day. Unset: no limit. Over a budget, the next model step parks on a `budget` item.
   */
  TOKEN_BUDGET_PER_CONVERSATION: z.preprocess(emptyAsUndefined, z.coerce.number().int().positive('must be positive').optional()),
  TOKEN_BUDGET_PER_USER_PER_DAY: z.preprocess(emptyAsUndefined, z.coerce.number().int().positive('must be positive').optional()),
  /**
   * Money budgets (issue 29), in BUDGET_CURRENCY, priced by MODEL_PRICES: a conversation's, and a user's per UTC
   * day. Counted in the usage ledger with every model call (chat, pipelines, images, SQL, summaries).
   */
  MONEY_BUDGET_PER_CONVERSATION: z.preprocess(emptyAsUndefined, z.coerce.number().positive('must be positive').optional()),
  MONEY_BUDGET_PER_USER_PER_DAY: z.preprocess(emptyAsUndefined, z.coerce.number().positive('must be positive').optional()),
  BUDGET_CURRENCY: z.string().length(3, 'must be a currency code such as USD').toUpperCase().default('USD'),
  /**
   * A call's answer allowance: a call reserves what it sends (estimated) plus this, and is refused when what it
   * sends does not fit what remains, so a budget is passed by at most one call's answer (the providers are sent
   * no output cap; set this near the answers your models give)
   */
  BUDGET_RESERVATION_TOKENS: positiveInt(4000),
  /** when set, a budget item is approved only by a user with this role, never by the one who spends */
  BUDGET_APPROVER_ROLE: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),

  /** attempts at a structured (response-schema) model answer that fails its zod schema before it is reported */
  MODEL_SCHEMA_ATTEMPTS: positiveInt(3),
  /**
   * The most a tool's result (an agent's tool or an MCP server's) may be, as JSON bytes, when the model gets it;
   * a larger one is cut with a note that says so. 128 KiB is about 32k tokens: a few per turn fit a 1M-token window.
   */
  /**
   * The tokens a model step may send (system prompt, tools, the conversation's summary and its newest messages);
   * unset: sized for the model (src/model/context-size.ts). Past 75 % of it, older turns are folded into a summary.
   */
  MODEL_CONTEXT_TOKENS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(2000, 'must be at least 2000').optional()),
  TOOL_RESULT_MAX_BYTES: z.coerce
    .number()
    .int('must be a whole number')
    .min(1024, 'must be at least 1024')
    .default(128 * 1024),
  GEMINI_IMAGE_MODEL: z.string().default('gemini-3-pro-image-preview'),
  /** per-model prices over the defaults in src/model/prices.ts: {"<model>": {"input": 0.3, "output": 2.5, "currency": "USD"}} per million tokens */
  MODEL_PRICES: z.preprocess(emptyAsUndefined, z.string().optional()).transform((text, ctx) => {
    try {
      return parseModelPrices(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^MODEL_PRICES:? ?/, '') });
      return z.NEVER;
    }
  }),

  /** where browsers reach the API, for absolute URLs (local recipe images, the MCP OAuth redirect URI); default http://HOST:PORT */
  PUBLIC_URL: optionalUrl,
  /** exact origins allowed to call the API from a browser elsewhere; comma-separated, no wildcard */
  CORS_ORIGINS: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.url({ error: 'must be a list of origins such as https://app.example.com' }).refine((origin) => origin !== '*', 'no wildcard'),
      ),
    )
    .default([]),

  /** per-user limits, shared by every API process through PostgreSQL (429 with Retry-After past them); 0 = none */
  USER_EVENT_STREAMS: z.coerce.number().int().min(0).default(20),
  USER_NEW_CONVERSATIONS_PER_MINUTE: z.coerce.number().int().min(0).default(60),
  USER_TURNS_PER_MINUTE: z.coerce.number().int().min(0).default(120),
  /** every authenticated request of a user (GET included), per minute and API process; 0: no limit */
  USER_REQUESTS_PER_MINUTE: z.coerce.number().int().min(0).default(1200),
  /** a user's requests in flight at once per API process, event streams aside; 0: no limit */
  USER_CONCURRENT_REQUESTS: z.coerce.number().int().min(0).default(8),
  /** refused (401) requests per client address, per minute and API process; past it the address gets 429; 0: no limit */
  AUTH_REFUSALS_PER_MINUTE: z.coerce.number().int().min(0).default(60),
  /** Express's "trust proxy": unset, the client address is the socket's; behind a proxy, its hops or addresses */
  TRUST_PROXY: z.preprocess(emptyAsUndefined, z.string().optional()),

  /** statement_timeout of SQL that a model writes (recipes, beer) */
  SQL_STATEMENT_TIMEOUT: duration.default(5_000),

  /**
   * Payload encryption (src/protection/, docs/security.md): `off` sends Temporal plain JSON. Otherwise every
   * payload is sealed with AES-256-GCM; with DATABASE_URL or TEMPORAL_ADDRESS set, missing keys stop the start.
   */
  PAYLOAD_ENCRYPTION: z.enum(['on', 'off']).default('on'),
  /** {"<key id>": "<base64 of 32 random bytes>", ...}: every key payloads may be sealed with (old ones stay for reading) */
  PAYLOAD_ENCRYPTION_KEYS: payloadKeys,
  /** the key new payloads are sealed with; optional when there is one key */
  PAYLOAD_ENCRYPTION_KEY_ID: z.string().min(1).max(100).optional(),

  /** how long a conversation (and its files) is kept after its last event; unset: kept until deleted */
  RETENTION_CONVERSATIONS: duration.optional(),
  /** how long per-call usage rows (model, tokens, conversation) are kept; budgets keep anonymous daily totals */
  RETENTION_USAGE: duration.optional(),
  /** how often the retention sweep runs (a Temporal Schedule) */
  RETENTION_SWEEP_EVERY: duration.default(3600_000),
  /** the shortest interval between a schedule's runs (POST /v1/schedules); a cron that fires more often is refused too */
  SCHEDULE_MIN_INTERVAL: duration.default(10_000),
  /** how many schedules one person may have */
  SCHEDULE_MAX_PER_USER: z.coerce.number().int().min(1).default(20),
  /**
   * After an erasure, rewrite (VACUUM FULL) the tables that held the person's rows, so their dead tuples leave the
   * table files: each table is locked (ACCESS EXCLUSIVE) while it is copied. `off` leaves that to autovacuum and
   * an operator (docs/security.md#crypto-shredding).
   */
  ERASURE_REWRITE_TABLES: z.enum(['on', 'off']).default('on'),

  GCS_BUCKET_NAME: z.string().optional(),
  STORAGE_EMULATOR_HOST: optionalUrl,
  // Operations (docs/operations.md). Tracing itself is configured by the standard OTEL_* variables.
  /** record prompts and replies on model spans (they hold what users wrote); off by default */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z.stringbool().default(false),
  /** serve GET /metrics (Prometheus text) on the API's port */
  METRICS_ENABLED: z.stringbool().default(false),
  /** serve GET /metrics on a port of its own (any process, the worker alone too); 0 = off */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** host of the METRICS_PORT listener */
  METRICS_HOST: z.string().default('127.0.0.1'),
});

/**
 * The runtime's settings, typed, and the catalog's agents' (AgentServer.config), read with them: an agent
 * reads its own through its type (the beer agent's BeerConfig).
 */
export type Config = z.infer<typeof ConfigSchema> & Readonly<Record<string, unknown>>;

/** The agents' settings a process reads beside the runtime's: the catalog's (a ServerCatalog is one). */
export interface AgentSettings {
  configShape(): z.ZodRawShape;
  /** the agents' durations a conversation carries (ServerCatalog.sessionSettings): their deadlines among them */
  sessionSettings?(config: Config): Record<string, number>;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads every setting at once, the runtime's and the catalog's agents', so a bad start-up names all wrong
 * variables, not the first.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, agents?: AgentSettings): Config {
  const schema = agents ? ConfigSchema.extend(agents.configShape()) : ConfigSchema;
  const raw = Object.fromEntries(Object.keys(schema.shape).map((key) => [key, emptyAsUndefined(env[key])]));
  const parsed = schema.safeParse(raw) as z.ZodSafeParseResult<Config>;
  const lines = parsed.success
    ? [...oidcProblems(parsed.data), ...providerProblems(parsed.data), ...retentionProblems(parsed.data, agents)]
    : parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(config)');
        const detail = issue.path.length > 1 ? ` (${issue.path.slice(1).join('.')})` : '';
        return `  ${name}${detail}: ${issue.message}`;
      });
  if (parsed.success && lines.length === 0) return parsed.data;
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

// An issuer without an audience would take any token the provider signs, for any application.
function oidcProblems(config: Config): string[] {
  const problems: string[] = [];
  if (config.AUTH_OIDC_ISSUER && !config.AUTH_OIDC_AUDIENCE)
    problems.push(
      "  AUTH_OIDC_AUDIENCE: required with AUTH_OIDC_ISSUER (the audience the provider puts in access tokens for Brigade's API)",
    );
  if (!config.AUTH_OIDC_ISSUER && (config.AUTH_OIDC_AUDIENCE || config.AUTH_OIDC_CLIENT_ID))
    problems.push('  AUTH_OIDC_ISSUER: required with AUTH_OIDC_AUDIENCE and AUTH_OIDC_CLIENT_ID');
  return problems;
}

const DURATION_WORDS = (ms: number) =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${Math.ceil(ms / 1000)}s`;

/**
 * A conversation is erased when its last event is older than RETENTION_CONVERSATIONS; every deadline in it
 * must end before that (an approval, a budget item, an agent's confirmation, a model call's attempts), so
 * that what waits on a person or a model has expired (an event) by then. The sweep also skips what is open
 * (src/protection/retention.ts); this keeps a deadline from outliving the conversation it belongs to.
 */
function retentionProblems(config: Config, agents?: AgentSettings): string[] {
  const retention = config.RETENTION_CONVERSATIONS;
  if (retention === undefined) return [];
  const deadlines: [string, number][] = [
    ['APPROVAL_TIMEOUT', config.APPROVAL_TIMEOUT],
    ['MODEL_TIMEOUT x MODEL_MAX_ATTEMPTS', config.MODEL_TIMEOUT * config.MODEL_MAX_ATTEMPTS],
    ...Object.entries(agents?.sessionSettings?.(config) ?? {}).map(([name, ms]): [string, number] => [`the agents' ${name}`, ms]),
  ];
  const [name, longest] = deadlines.reduce((a, b) => (b[1] > a[1] ? b : a));
  return retention > longest
    ? []
    : [
        `  RETENTION_CONVERSATIONS: is ${DURATION_WORDS(retention)}, which is not longer than ${name} (${DURATION_WORDS(longest)}), so a conversation could be erased while it still waits; make it longer than the longest deadline`,
      ];
}

/** MODEL_PROVIDER must name a provider whose key is set. */
function providerProblems(config: Config): string[] {
  const provider = config.MODEL_PROVIDER;
  const keyName = provider
    ? ({ gemini: 'GEMINI_API_KEY', openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const)[provider]
    : undefined;
  return keyName && !config[keyName]?.trim() ? [`  MODEL_PROVIDER: is ${provider}, but ${keyName} is not set`] : [];
}
