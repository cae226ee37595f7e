// What a model call costs: a per-model price table so that budgets, the conversation's usage and the
// eval's scorecard can speak in money, and so that a pro model's tokens do not count as a flash model's.
// Defaults are list prices per million tokens (USD) for the common Gemini, OpenAI and Anthropic models;
// MODEL_PRICES overrides or adds entries. Pure: no I/O, safe in any layer.
import { z } from 'zod';
import type { ModelUsage } from './types.ts';

export const ModelPrice = z.object({
  /** per million input (prompt) tokens */
  input: z.number().nonnegative(),
  /**
   * per million input tokens read from the provider's context cache (Gemini's implicit or explicit cache,
   * OpenAI's and Anthropic's prompt caches); absent, they are priced as `input`
   */
  cachedInput: z.number().nonnegative().optional(),
  /** per million output tokens (thinking included) */
  output: z.number().nonnegative(),
  /** per generated image, for image models */
  image: z.number().nonnegative().optional(),
  currency: z.string().length(3).default('USD'),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

export const ModelPrices = z.record(z.string().min(1), ModelPrice);
export type ModelPrices = z.infer<typeof ModelPrices>;

const usd = (input: number, output: number, image?: number): ModelPrice => ({
  input,
  output,
  ...(image === undefined ? {} : { image }),
  currency: 'USD',
});

/** List prices (USD per million tokens). Keys match a model name exactly or as its prefix (`gpt-4o` covers `gpt-4o-2024-08-06`). */
export const DEFAULT_MODEL_PRICES: ModelPrices = {
  'gemini-2.5-flash-lite': usd(0.1, 0.4),
  'gemini-2.5-flash-image': usd(0.3, 2.5, 0.039),
  'gemini-2.5-flash': usd(0.3, 2.5),
  'gemini-2.5-pro': usd(1.25, 10),
  'gemini-2.0-flash': usd(0.1, 0.4),
  'gemini-3-pro-image-preview': usd(2, 12, 0.134),
  'gemini-3-pro-preview': usd(2, 12),
  'gpt-4o-mini': usd(0.15, 0.6),
  'gpt-4o': usd(2.5, 10),
  'gpt-4.1-nano': usd(0.1, 0.4),
  'gpt-4.1-mini': usd(0.4, 1.6),
  'gpt-4.1': usd(2, 8),
  'gpt-5-nano': usd(0.05, 0.4),
  'gpt-5-mini': usd(0.25, 2),
  'gpt-5': usd(1.25, 10),
  'o4-mini': usd(1.1, 4.4),
  'claude-3-5-haiku': usd(0.8, 4),
  'claude-haiku-4-5': usd(1, 5),
  'claude-sonnet-4': usd(3, 15),
  'claude-sonnet-4-5': usd(3, 15),
  'claude-opus-4': usd(15, 75),
  'claude-opus-4-1': usd(15, 75),
  // The offline model costs nothing; it is listed so that its usage reads as free, not as unknown.
  offline: usd(0, 0, 0),
};

/** Parses MODEL_PRICES (a JSON object of model name to price) over the defaults. Throws a sentence on bad JSON. */
export function parseModelPrices(text: string | undefined): ModelPrices {
  if (!text?.trim()) return DEFAULT_MODEL_PRICES;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('MODEL_PRICES must be JSON: {"<model>": {"input": 0.3, "cachedInput": 0.075, "output": 2.5, "currency": "USD"}}');
  }
  const parsed = ModelPrices.safeParse(raw);
  if (!parsed.success) throw new Error(`MODEL_PRICES: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return { ...DEFAULT_MODEL_PRICES, ...parsed.data };
}

/** The price of a model: an exact entry, else the longest key that prefixes its name; undefined when unknown. */
export function priceOf(prices: ModelPrices, model: string): ModelPrice | undefined {
  const name = model.replace(/^models\//, '');
  if (prices[name]) return prices[name];
  let best: string | undefined;
  for (const key of Object.keys(prices)) if (name.startsWith(key) && (!best || key.length > best.length)) best = key;
  return best ? prices[best] : undefined;
}

export interface Cost {
  amount: number;
  currency: string;
}

/** What one call cost, or undefined for a model with no price (the caller counts tokens instead). */
export function costOf(
  prices: ModelPrices,
  model: string,
  usage: Pick<ModelUsage, 'inputTokens' | 'outputTokens' | 'cachedInputTokens'> & { images?: number },
): Cost | undefined {
  const price = priceOf(prices, model);
  if (!price) return undefined;
  // the cached part of the input at its own rate (a provider never reports more cached than it was sent)
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const input = (usage.inputTokens - cached) * price.input + cached * (price.cachedInput ?? price.input);
  const amount = (input + usage.outputTokens * price.output) / 1_000_000 + (usage.images ?? 0) * (price.image ?? 0);
  // Micro-units: sums of many calls stay exact enough without floating drift in the view.
  return { amount: Math.round(amount * 1_000_000) / 1_000_000, currency: price.currency };
}
