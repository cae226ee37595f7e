// The chat model and the task model, chosen by settings: Gemini, OpenAI-compatible chat completions or
// Anthropic's Messages API by whose key is set (MODEL_PROVIDER chooses when several are), otherwise the
// offline model: `npm start` works with no settings at all.
import type { ModelSettings } from './model-settings.ts';
import { createAnthropicModel, createAnthropicTaskModel } from './anthropic.ts';
import { createGeminiModel } from './gemini.ts';
import { createOfflineModel } from './offline.ts';
import { type OfflineAgents, createOfflineTaskModel } from './offline-tasks.ts';
import { createOpenAiModel, createOpenAiTaskModel } from './openai.ts';
import { pacedModel } from './stream-pacing.ts';
import { type TaskModel, createGeminiTaskModel } from './task-model.ts';
import { type ChatModel, ModelCallError } from './types.ts';

export type ModelConfig = Pick<ModelSettings, 'GEMINI_API_KEY' | 'GEMINI_BASE_URL' | 'GEMINI_MODEL'> &
  Partial<
    Pick<
      ModelSettings,
      | 'OPENAI_API_KEY'
      | 'OPENAI_BASE_URL'
      | 'OPENAI_MODEL'
      | 'ANTHROPIC_API_KEY'
      | 'ANTHROPIC_BASE_URL'
      | 'ANTHROPIC_MODEL'
      | 'MODEL_PROVIDER'
      | 'GEMINI_CONTEXT_CACHE'
      | 'GEMINI_CONTEXT_CACHE_TTL'
      | 'GEMINI_CONTEXT_CACHE_MIN_TOKENS'
    >
  > & {
    MODEL_TIMEOUT?: number;
    MODEL_IDLE_TIMEOUT?: number;
    GEMINI_IMAGE_MODEL?: string;
  };

export type Provider = 'gemini' | 'openai' | 'anthropic';
const PROVIDERS: readonly Provider[] = ['gemini', 'openai', 'anthropic'];
const PROVIDER_NAMES: Record<Provider, string> = { gemini: 'Gemini', openai: 'OpenAI', anthropic: 'Anthropic' };

function keyOf(config: ModelConfig, provider: Provider): string | undefined {
  const key = { gemini: config.GEMINI_API_KEY, openai: config.OPENAI_API_KEY, anthropic: config.ANTHROPIC_API_KEY }[provider]?.trim();
  return key || undefined;
}

/** The provider whose key is set (MODEL_PROVIDER among several; Gemini first when it does not say), or none. */
export function selectProvider(config: ModelConfig): Provider | undefined {
  if (config.MODEL_PROVIDER && keyOf(config, config.MODEL_PROVIDER)) return config.MODEL_PROVIDER;
  return PROVIDERS.find((provider) => keyOf(config, provider));
}

/** The chat model's name (`offline` without a key), for /v1/meta and the eval's scorecard. */
export function chatModelName(config: ModelConfig): string {
  const provider = selectProvider(config);
  if (provider === 'openai') return config.OPENAI_MODEL ?? 'gpt-4.1-mini';
  if (provider === 'anthropic') return config.ANTHROPIC_MODEL ?? 'claude-haiku-4-5';
  return provider === 'gemini' ? config.GEMINI_MODEL : 'offline';
}

/** The chat model; the offline one (no key) reads the agents' offline parts from the catalog. */
export function selectModel(config: ModelConfig, agents: OfflineAgents): ChatModel {
  const provider = selectProvider(config);
  if (!provider) return createOfflineModel(agents);
  const pacing = { firstPieceMs: config.MODEL_TIMEOUT ?? 60_000, idleMs: config.MODEL_IDLE_TIMEOUT ?? 30_000 };
  // The pacing bounds a chat call. OpenAI's and Anthropic's own clocks cover only the response's headers: set a
  // second past it, a backstop that never speaks first. Gemini's spans the whole body, so it is left off.
  const headers = { timeoutMs: pacing.firstPieceMs + 1000 };
  return pacedModel(chatModelOf(provider, config, headers), pacing);
}

function chatModelOf(provider: Provider, config: ModelConfig, headers: { timeoutMs: number }): ChatModel {
  if (provider === 'openai') {
    return createOpenAiModel({
      apiKey: keyOf(config, provider)!,
      model: chatModelName(config),
      ...(config.OPENAI_BASE_URL ? { baseUrl: config.OPENAI_BASE_URL } : {}),
      ...headers,
    });
  }
  if (provider === 'anthropic') {
    return createAnthropicModel({
      apiKey: keyOf(config, provider)!,
      model: chatModelName(config),
      ...(config.ANTHROPIC_BASE_URL ? { baseUrl: config.ANTHROPIC_BASE_URL } : {}),
      ...headers,
    });
  }
  return createGeminiModel({
    apiKey: keyOf(config, provider)!,
    model: config.GEMINI_MODEL,
    ...(config.GEMINI_BASE_URL ? { baseUrl: config.GEMINI_BASE_URL } : {}),
    contextCache: {
      mode: config.GEMINI_CONTEXT_CACHE ?? 'implicit',
      ttlMs: config.GEMINI_CONTEXT_CACHE_TTL ?? 300_000,
      minTokens: config.GEMINI_CONTEXT_CACHE_MIN_TOKENS ?? 4096,
    },
  });
}

/**
 * The model for one-shot tasks (pipelines, SQL generation, grounding), chosen the same way. What OpenAI's chat
 * completions and Anthropic's Messages cannot do here (a Google Search grounded answer, an image) goes to Gemini
 * when its key is set too, and is otherwise refused in words that say which setting would do it.
 */
export function selectTaskModel(config: ModelConfig, agents: OfflineAgents): TaskModel {
  const provider = selectProvider(config);
  if (!provider) return createOfflineTaskModel(agents);
  const gemini = keyOf(config, 'gemini')
    ? createGeminiTaskModel({
        apiKey: keyOf(config, 'gemini')!,
        model: config.GEMINI_MODEL,
        imageModel: config.GEMINI_IMAGE_MODEL ?? 'gemini-3-pro-image-preview',
        timeoutMs: config.MODEL_TIMEOUT ?? 60_000,
        ...(config.GEMINI_BASE_URL ? { baseUrl: config.GEMINI_BASE_URL } : {}),
      })
    : undefined;
  if (provider === 'gemini') return gemini!;
  const timeoutMs = config.MODEL_TIMEOUT ?? 60_000;
  const primary =
    provider === 'openai'
      ? createOpenAiTaskModel({
          apiKey: keyOf(config, provider)!,
          model: chatModelName(config),
          timeoutMs,
          ...(config.OPENAI_BASE_URL ? { baseUrl: config.OPENAI_BASE_URL } : {}),
        })
      : createAnthropicTaskModel({
          apiKey: keyOf(config, provider)!,
          model: chatModelName(config),
          timeoutMs,
          ...(config.ANTHROPIC_BASE_URL ? { baseUrl: config.ANTHROPIC_BASE_URL } : {}),
        });
  return withFallback(primary, PROVIDER_NAMES[provider], gemini);
}

/** Grounding and images to the named fallback (Gemini), or a refusal that says why; everything else to `primary`. */
export function withFallback(primary: Omit<TaskModel, 'image'>, providerName: string, fallback: TaskModel | undefined): TaskModel {
  const cannot = (what: string) =>
    new ModelCallError(
      `${providerName} cannot ${what} here, and no fallback is set: set GEMINI_API_KEY too, and Gemini does it as the named fallback.`,
      { retryable: false },
    );
  const model: TaskModel = {
    name: primary.name,
    offline: false,
    async complete(request) {
      if (!request.grounding) return primary.complete(request);
      if (!fallback) throw cannot('ground an answer in a web search');
      const { model: _primaryModel, ...rest } = request;
      return fallback.complete(rest);
    },
    async image(request) {
      if (!fallback) throw cannot('generate an image');
      return fallback.image(request);
    },
  };
  // the image model that really answers image(), for whoever prices its calls
  const imageModel = (fallback as { imageModel?: string } | undefined)?.imageModel;
  return imageModel ? Object.assign(model, { imageModel }) : model;
}
