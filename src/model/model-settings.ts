// The model's settings as read from the environment: the runtime's config (src/config.ts) includes them, and
// the model layer reads its own from here without depending on the rest of the config.
import { z } from 'zod';
import { duration } from '../shared/duration.ts';
import { emptyAsUndefined, optionalUrl } from '../shared/setting-schemas.ts';

export const MODEL_SETTINGS = {
  GEMINI_API_KEY: z.string().optional(),
  GEMINI_BASE_URL: optionalUrl,
  GEMINI_MODEL: z.string().default('gemini-2.5-flash'),
  /**
   * implicit: each request opens with the same bytes and Gemini caches the repeated prefix on its own; explicit:
   * the prefix (system instruction and tools) is stored with caches.create and named instead of sent
   */
  GEMINI_CONTEXT_CACHE: z.preprocess(emptyAsUndefined, z.enum(['implicit', 'explicit']).default('implicit')),
  /** how long an explicit cache lives (its storage is billed by the hour) */
  GEMINI_CONTEXT_CACHE_TTL: duration.default(300_000),
  /** an explicit cache is made only for a prefix of at least this many tokens (estimated): Gemini's minimum */
  GEMINI_CONTEXT_CACHE_MIN_TOKENS: z.coerce.number().int().min(0).default(4096),
  /** OpenAI-compatible chat completions (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, OpenRouter); the base URL with its /v1 */
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_MODEL: z.string().default('gpt-4.1-mini'),
  /** Anthropic's Messages API */
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: optionalUrl,
  ANTHROPIC_MODEL: z.string().default('claude-haiku-4-5'),
  /** which provider when more than one key is set (with one key, that provider; with none, the offline model) */
  MODEL_PROVIDER: z.preprocess(emptyAsUndefined, z.enum(['gemini', 'openai', 'anthropic']).optional()),
  /** how long a chat call may take to start answering (a one-shot task call: to answer whole) */
  MODEL_TIMEOUT: duration.default(60_000),
  /** the longest silence between two pieces of a streamed answer */
  MODEL_IDLE_TIMEOUT: duration.default(30_000),
};

export type ModelSettings = z.infer<z.ZodObject<typeof MODEL_SETTINGS>>;
