import { useEffect, useState } from 'react';
import { api } from './api';
import { PRICES_AS_OF, estimateCost, formatCost } from './pricing';
import type { Usage } from './types';

/** Tokens and an estimated cost; per model when the server has metrics by model (GET .../metrics). */
export function UsagePanel({ usage, model, conversationId }: { usage: Usage; model?: string; conversationId: string }) {
  const [byModel, setByModel] = useState<{ model: string; inputTokens: number; outputTokens: number }[]>();
  useEffect(() => {
    api<{ byModel?: { model: string; inputTokens: number; outputTokens: number }[] }>('GET', `/v1/conversations/${conversationId}/metrics`)
      .then((m) => setByModel(Array.isArray(m?.byModel) ? m.byModel : undefined))
      .catch(() => setByModel(undefined));
  }, [conversationId, usage.totalTokens]);
  const cost = byModel
    ? byModel.reduce<number | undefined>((sum, m) => {
        const c = estimateCost(m.model, m.inputTokens, m.outputTokens);
        return sum === undefined || c === undefined ? undefined : sum + c;
      }, 0)
    : model
      ? estimateCost(model, usage.inputTokens, usage.outputTokens)
      : undefined;
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
