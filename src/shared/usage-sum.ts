// The one sum of model usage: a turn's counters (workflow code: pure), a step's calls, a structured answer's
// attempts. A conversation's usage is the usage ledger's sum of its rows (src/db/usage-ledger.ts
// readConversationUsage): every model call made for it, chat or task, in one place.

/** Tokens of one or more model calls, as providers report them. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** `sum` with `used` added: a new value of `sum`'s shape (its other fields kept). */
export function addUsage<T extends TokenCounts>(sum: T, used: TokenCounts): T {
  return {
    ...sum,
    inputTokens: sum.inputTokens + used.inputTokens,
    outputTokens: sum.outputTokens + used.outputTokens,
    totalTokens: sum.totalTokens + used.totalTokens,
  };
}
