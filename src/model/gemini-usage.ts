// Gemini's usage metadata as a ModelUsage, for chat and one-shot calls alike.
import type { GenerateContentResponseUsageMetadata } from '@google/genai';
import type { ModelUsage } from './types.ts';

/**
 * Gemini repeats usage on each chunk of a stream; the last one counts the whole reply. Its prompt count includes
 * what was read from a cache (implicit or explicit), which it reports apart as cachedContentTokenCount.
 */
export function toUsage(usage: GenerateContentResponseUsageMetadata | undefined): ModelUsage {
  const inputTokens = usage?.promptTokenCount ?? 0;
  const outputTokens = usage?.candidatesTokenCount ?? 0;
  const cached = usage?.cachedContentTokenCount;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage?.totalTokenCount ?? inputTokens + outputTokens,
    ...(cached ? { cachedInputTokens: cached } : {}),
  };
}
