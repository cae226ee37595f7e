// How much of a model's window a conversation's requests may fill (MODEL_CONTEXT_TOKENS when set). A budget, not
// the window: a request near a model's limit costs the most and answers the slowest, and the estimate
// (src/model/token-estimate.ts, ~4 bytes a token) is only close. The offline model's is small on purpose, so
// that `npm start` and the tests run the same compaction path a long conversation does with a real model.

/** By model-name prefix, first match wins: [prefix, the budget in tokens]. */
const BUDGETS: readonly (readonly [string, number])[] = [
  ['offline', 8_000],
  // 1,048,576-token windows: a fifth of it, where latency and price per turn stay reasonable
  ['gemini-', 200_000],
  ['gpt-4.1', 200_000],
  ['gpt-5', 150_000],
  ['gpt-4o', 96_000],
  ['claude', 150_000],
];
/** a model the table does not know: a window every current chat model has */
const FALLBACK = 96_000;

export function contextBudgetFor(model: string): number {
  return BUDGETS.find(([prefix]) => model.startsWith(prefix))?.[1] ?? FALLBACK;
}

/** The budget a conversation's agent gets: its own (AgentSpec.contextTokens), the setting, or the model's default. */
export function contextBudget(model: string, setting: number | undefined, agentOwn?: number): number {
  return agentOwn ?? setting ?? contextBudgetFor(model);
}
