import { PRICES_AS_OF, estimateCost, formatCost } from './pricing';
import type { Usage } from './types';

/** Tokens and an estimated cost, at the list price of the model this deployment runs (GET /v1/meta). */
export function UsagePanel({ usage, model }: { usage: Usage; model?: string }) {
  const cost = model ? estimateCost(model, usage.inputTokens, usage.outputTokens) : undefined;
  return (
    <section className="usage" aria-label="Usage">
      <h2 className="visually-hidden">Usage</h2>
      <span>
        <strong>{usage.totalTokens.toLocaleString()}</strong> tokens ({usage.inputTokens.toLocaleString()} in, {usage.outputTokens.toLocaleString()} out) in {usage.calls} model calls
      </span>
      <span title={`List prices as of ${PRICES_AS_OF}; an estimate`}>
        Estimated cost: <strong>{formatCost(cost)}</strong> <span className="muted">({model ?? 'model unknown'}, prices of {PRICES_AS_OF})</span>
      </span>
    </section>
  );
}
