// A token count for what a provider has not reported: a request before it is sent (what it reserves against the
// budgets, what fits the context window), a stream stopped before its usage came. About four bytes of UTF-8 a token
// (bytes, not characters, so text in scripts of many bytes a character is not undercounted); the provider's own
// count is kept wherever it sent one, and the window's estimate is reconciled with it (tokenCalibration).
import type { ChatMessage } from '../shared/messages.ts';
import type { ModelUsage } from './types.ts';

const BYTES_PER_TOKEN = 4;

/**
 * How many tokens the provider counts for each one estimated, learned from its reports: after each answered call,
 * the tokens it reported against the estimate of what it was sent move the ratio a fifth of the way (JSON and
 * scripts of many bytes a character count otherwise than four bytes a token). The context window divides its
 * budget by it; a reservation needs none, its settlement is the provider's own count. A report far from any
 * tokenizer's (under half or over twice the estimate: a proxy or a test server that counts nothing) teaches nothing.
 */
export const tokenCalibration = {
  ratio: 1,
  reconcile(estimated: number, reported: number): void {
    if (estimated < 200 || reported <= 0) return;
    const target = reported / estimated;
    if (target < 0.5 || target > 2) return;
    this.ratio += (target - this.ratio) / 5;
  },
};

export const estimateTokens = (text: string): number => Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN);

/** What a request sends, estimated before it is made: its system prompt, its transcript and its tools' declarations. */
export const requestTokens = (sent: { system: string; transcript: readonly ChatMessage[]; tools?: readonly unknown[] }): number =>
  estimateTokens(sent.system) +
  estimateTokens(JSON.stringify(sent.transcript)) +
  (sent.tools?.length ? estimateTokens(JSON.stringify(sent.tools)) : 0);

/**
 * What a stopped call used: what the provider reported of it, and an estimate of what it did not (what it was sent,
 * when it reported nothing; what streamed back, when it had not counted the answer yet, as Anthropic counts the
 * prompt first). A call that was sent is never settled at nothing.
 */
export function stoppedCallUsage(
  reported: ModelUsage | undefined,
  sent: { system: string; transcript: readonly ChatMessage[] },
  streamed: string,
): ModelUsage {
  const inputTokens = reported?.inputTokens || requestTokens(sent);
  const outputTokens = reported?.outputTokens || estimateTokens(streamed);
  const cached = reported?.inputTokens ? reported.cachedInputTokens : undefined;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, ...(cached ? { cachedInputTokens: cached } : {}) };
}
