// Estimated cost per model, in US dollars per million tokens (input, output). Prices are Google's published
// Gemini API list prices for paid-tier text (standard context), as of 2026-11-01; they change, so the UI
// calls the figure an estimate. The offline model costs nothing.
export const PRICES_AS_OF = '2026-11-01';
const PRICES: Record<string, { input: number; output: number }> = {
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4 },
  offline: { input: 0, output: 0 },
};

export function estimateCost(model: string, inputTokens: number, outputTokens: number): number | undefined {
  const price = PRICES[model] ?? PRICES[model.replace(/-\d{3}$|-preview.*$/, '')];
  if (!price) return undefined;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}

export function formatCost(cost: number | undefined): string {
  if (cost === undefined) return 'unknown (no price for this model)';
  if (cost === 0) return '$0.00';
  return cost < 0.01 ? `$${cost.toFixed(5)}` : `$${cost.toFixed(4)}`;
}
