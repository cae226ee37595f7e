import { PRICES_AS_OF, estimateCost, formatCost } from './pricing';
import type { ConversationView } from './types';

/** Tokens and an estimated cost, at the list price of the model this deployment runs (GET /v1/meta). */
export function UsagePanel({
  usage,
  model,
  budget,
}: {
  usage: ConversationView['usage'];
  model?: string;
  budget?: ConversationView['budget'];
}) {
  const cost = model ? estimateCost(model, usage.inputTokens, usage.outputTokens) : undefined;
  const money = budget?.money;
  return (
    <section className="usage" aria-label="Usage">
      <h2 className="visually-hidden">Usage</h2>
      <span>
        <strong>{usage.totalTokens.toLocaleString()}</strong> tokens ({usage.inputTokens.toLocaleString()} in,{' '}
        {usage.outputTokens.toLocaleString()} out) in {usage.calls} model calls
      </span>
      {usage.cost ? (
        <span title="Every model call of this conversation, its tools' and pipelines' calls included, at the server's prices">
          Estimated cost: <strong>{formatMoney(usage.cost.amount, usage.cost.currency)}</strong>{' '}
          <span className="muted">(every model call, at list prices)</span>
        </span>
      ) : (
        <span title={`List prices as of ${PRICES_AS_OF}; an estimate`}>
          Estimated cost: <strong>{formatCost(cost)}</strong>{' '}
          <span className="muted">
            ({model ?? 'model unknown'}, prices of {PRICES_AS_OF})
          </span>
        </span>
      )}
      {budget?.conversation && <BudgetMeter label="This conversation's budget" {...budget.conversation} />}
      {budget?.userDay && <BudgetMeter label="Your budget today" {...budget.userDay} />}
      {money?.conversation && <BudgetMeter label="This conversation's budget" {...money.conversation} currency={money.currency} />}
      {money?.userDay && <BudgetMeter label="Your budget today" {...money.userDay} currency={money.currency} />}
      {budget?.warning && (
        <span className="budget warning" role="status">
          {budget.warning.text}
        </span>
      )}
    </section>
  );
}

/** Tokens spent against a budget: over it, the next model step waits for a person to approve more. */
function BudgetMeter({ label, spent, limit, currency }: { label: string; spent: number; limit: number; currency?: string }) {
  return (
    <span className={spent >= limit ? 'budget over' : 'budget'}>
      {label}: <meter min={0} max={limit} low={limit * 0.8} high={limit * 0.8} optimum={0} value={Math.min(spent, limit)} />{' '}
      {currency ? (
        <>
          <strong>{formatMoney(spent, currency)}</strong> of {formatMoney(limit, currency)}
        </>
      ) : (
        <>
          <strong>{spent.toLocaleString()}</strong> of {limit.toLocaleString()} tokens
        </>
      )}
    </span>
  );
}

const formatMoney = (amount: number, currency: string) => `${currency} ${amount.toFixed(amount < 1 ? 4 : 2)}`;
