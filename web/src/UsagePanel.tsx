import { PRICES_AS_OF, estimateCost, formatCost } from './pricing';
import type { ConversationView, Usage } from './types';

/** Tokens and an estimated cost, at the list price of the model this deployment runs (GET /v1/meta). */
export function UsagePanel({ usage, model, budget }: { usage: Usage; model?: string; budget?: ConversationView['budget'] }) {
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
      {budget?.conversation && <BudgetMeter label="This conversation's budget" {...budget.conversation} />}
      {budget?.userDay && <BudgetMeter label="Your budget today" {...budget.userDay} />}
    </section>
  );
}

/** Tokens spent against a budget: over it, the next model step waits for a person to approve more. */
function BudgetMeter({ label, spent, limit }: { label: string; spent: number; limit: number }) {
  return (
    <span className={spent >= limit ? 'budget over' : 'budget'}>
      {label}: <meter min={0} max={limit} value={Math.min(spent, limit)} /> <strong>{spent.toLocaleString()}</strong> of {limit.toLocaleString()} tokens
    </span>
  );
}
