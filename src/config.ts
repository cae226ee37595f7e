import { z } from 'zod';
import { normalizeClientId } from './shared/client-id.ts';
import { AGENT_SETTINGS } from './agents/settings.ts';
import { duration } from './shared/duration.ts';
import { parseModelPrices } from './model/prices.ts';
import { optionalUrl, positiveInt } from './shared/setting-schemas.ts';

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
  // Checked here rather than as a key schema: zod names a failing key in its issue path, which would
  // print the rejected secret at start-up.
  .superRefine((tokens, ctx) => {
    Object.keys(tokens).forEach((token, index) => {
      if (token.length < 16) ctx.addIssue({ code: 'custom', message: `token #${index + 1} is shorter than 16 characters` });
    });
  })
  .optional();

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);

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
  /** a JSON file of MCP servers whose tools agents may use (docs/agents/mcp.md) */
  BRIGADE_MCP_CONFIG: z.preprocess(emptyAsUndefined, z.string().optional()),

  GEMINI_API_KEY: z.string().optional(),
  GEMINI_BASE_URL: optionalUrl,
  GEMINI_MODEL: z.string().default('gemini-2.5-flash'),
  MODEL_TIMEOUT: duration.default(60_000),
  MODEL_MAX_ATTEMPTS: positiveInt(5),

  API_TOKENS: apiTokens,

  AGENT_MAX_STEPS: positiveInt(8),
  AGENT_MAX_TOOL_ERRORS: positiveInt(3),
  APPROVAL_TIMEOUT: duration.default(24 * 3600_000),
  CONTINUE_AS_NEW_AFTER_TURNS: z.coerce.number().int().min(0).default(0),
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

  /** attempts at a structured (response-schema) model answer that fails its zod schema before it is reported */
  MODEL_SCHEMA_ATTEMPTS: positiveInt(3),
  GEMINI_IMAGE_MODEL: z.string().default('gemini-3-pro-image-preview'),
  /** per-model prices over the defaults in src/model/prices.ts: {"<model>": {"input": 0.3, "output": 2.5, "currency": "USD"}} per million tokens */
  MODEL_PRICES: z
    .preprocess(emptyAsUndefined, z.string().optional())
    .transform((text, ctx) => {
      try {
        return parseModelPrices(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^MODEL_PRICES:? ?/, '') });
        return z.NEVER;
      }
    }),

  /** where browsers reach the API, for absolute URLs (local recipe images); default http://HOST:PORT */
  PUBLIC_URL: optionalUrl,
  /** exact origins allowed to call the API from a browser elsewhere; comma-separated, no wildcard */
  CORS_ORIGINS: z
    .string()
    .transform((text) => text.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.url({ error: 'must be a list of origins such as https://app.example.com' }).refine((origin) => origin !== '*', 'no wildcard')))
    .default([]),

  /** per-user limits, shared by every API process through PostgreSQL (429 with Retry-After past them); 0 = none */
  USER_EVENT_STREAMS: z.coerce.number().int().min(0).default(20),
  USER_NEW_CONVERSATIONS_PER_MINUTE: z.coerce.number().int().min(0).default(60),
  USER_TURNS_PER_MINUTE: z.coerce.number().int().min(0).default(120),

  /** statement_timeout of SQL that a model writes (recipes, beer) */
  SQL_STATEMENT_TIMEOUT: duration.default(5_000),

  GCS_BUCKET_NAME: z.string().optional(),
  STORAGE_EMULATOR_HOST: optionalUrl,
  // each agent's own settings, from its home
  ...AGENT_SETTINGS,

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

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads every setting at once so a bad start-up names all wrong variables, not the first. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(ConfigSchema.shape).map((key) => [key, emptyAsUndefined(env[key])]),
  );
  const parsed = ConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '(config)');
    const detail = issue.path.length > 1 ? ` (${issue.path.slice(1).join('.')})` : '';
    return `  ${name}${detail}: ${issue.message}`;
  });
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}
