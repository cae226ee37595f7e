// The one sum of model usage: a turn's counters (workflow code: pure), a step's calls, a structured answer's
// attempts. A conversation's usage is the usage ledger's sum of its rows (src/db/usage-ledger.ts
// readConversationUsage): every model call made for it, chat or task, in one place.

/** Tokens of one or more model calls, as providers report them. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** the part of `inputTokens` read from the provider's context cache, when it reported one */
  cachedInputTokens?: number;
}

/**
 * `sum` with `used` added: a new value of `sum`'s shape (its other fields kept). Cached tokens are summed only
 * where either side has them, so a sum of calls that reported none keeps the shape it had.
 */
export function addUsage<T extends TokenCounts>(sum: T, used: TokenCounts): T {
  const cached =
    sum.cachedInputTokens === undefined && used.cachedInputTokens === undefined
      ? {}
      : { cachedInputTokens: (sum.cachedInputTokens ?? 0) + (used.cachedInputTokens ?? 0) };
  return {
    ...sum,
    inputTokens: sum.inputTokens + used.inputTokens,
    outputTokens: sum.outputTokens + used.outputTokens,
    totalTokens: sum.totalTokens + used.totalTokens,
    ...cached,
  };
}
