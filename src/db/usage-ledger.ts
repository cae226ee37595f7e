// The usage ledger (db/migrations/028_usage_ledger.sql): every model call, reserved before and settled after,
// kept per user apart from conversations so that deleting one refunds nothing. Writes go through the two
// SQL functions only (the app may read its own rows, never update or delete them).
import type pg from 'pg';
import type { BudgetExceeded, BudgetLimits } from '../shared/turn-control.ts';

export type CallKind = 'chat' | 'task' | 'image';

export interface LedgerCall {
  userId: string;
  key: string;
  conversationId?: string | undefined;
  kind: CallKind;
  task?: string | undefined;
  /** the model asked */
  model: string;
}

/** What a call reserves (`tokens`, `cost`: its request and its answer's allowance) and the part that must fit (`fit*`: its request). */
export interface LedgerEstimate {
  tokens: number;
  cost: number;
  currency: string;
  fitTokens: number;
  fitCost: number;
}

/**
 * Reserves `call` if what it sends fits below every limit, with what is spent and held, as one step under the
 * user's lock (db/migrations/045_reserve_what_is_sent.sql); answers the first limit it would pass instead.
 */
export async function reserveUsage(
  pool: pg.Pool,
  call: LedgerCall,
  estimate: LedgerEstimate,
  limits: BudgetLimits,
): Promise<BudgetExceeded | undefined> {
  const { rows } = await pool.query<{ admitted: boolean; scope: string | null; unit: string | null; spent: number | null; spend_limit: number | null }>(
    'SELECT * FROM brigade_reserve_usage($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)',
    [
      call.userId,
      call.key,
      call.conversationId ?? null,
      call.kind,
      call.task ?? null,
      call.model,
      Math.round(estimate.tokens),
      estimate.cost,
      estimate.currency,
      limits.conversation ?? null,
      limits.conversationMoney ?? null,
      limits.userDay ?? null,
      limits.userDayMoney ?? null,
      Math.round(estimate.fitTokens),
      estimate.fitCost,
    ],
  );
  const row = rows[0]!;
  if (row.admitted) return undefined;
  const over: BudgetExceeded = { scope: row.scope === 'conversation' ? 'conversation' : 'user-day', spent: Number(row.spent), limit: Number(row.spend_limit) };
  return row.unit === 'money' ? { ...over, unit: 'money', currency: estimate.currency } : over;
}

/** What a call settles with: the model's report, priced. */
export interface LedgerUse {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** the part of inputTokens the provider read from its context cache, as it reported it */
  cachedInputTokens?: number | undefined;
  images?: number;
  cost?: { amount: number; currency: string } | undefined;
}

/** A call and what it settles with, to be written alone (settleUsage) or with a batch (src/db/batch.ts). */
export interface LedgerSettlement {
  call: LedgerCall;
  used: LedgerUse;
}

/** `brigade_settle_usage` called with its 13 arguments from `$<first>` on, for a statement that carries more. */
export const settleUsageCall = (first: number) =>
  `brigade_settle_usage(${Array.from({ length: 13 }, (_, index) => `$${first + index}`).join(', ')})`;

export function settleUsageArgs({ call, used }: LedgerSettlement): unknown[] {
  return [
    call.userId,
    call.key,
    call.conversationId ?? null,
    call.kind,
    call.task ?? null,
    call.model,
    used.inputTokens,
    used.outputTokens,
    used.totalTokens,
    used.images ?? null,
    used.cost?.amount ?? 0,
    used.cost?.currency ?? null,
    used.cachedInputTokens ?? null,
  ];
}

/** Settles the call with what the model reported (or records it, when it was made without a reservation). */
export async function settleUsage(pool: pg.Pool, settlement: LedgerSettlement): Promise<void> {
  await pool.query({ name: 'brigade.settle_usage', text: `SELECT ${settleUsageCall(1)}`, values: settleUsageArgs(settlement) });
}

/**
 * A conversation's usage: every model call made for it and settled (its turns, its title, the save pipeline's
 * and beer's calls), with their cost in `currency` (0 without one); a call that billed nothing (a failed attempt) is no call.
 * `cachedInputTokens` is the part of `inputTokens` the provider read from its context cache.
 * The ledger is its one source. `db` acts for the user.
 */
export async function readConversationUsage(db: pg.ClientBase, conversationId: string, currency?: string) {
  const { rows } = await db.query<{
    inputTokens: number;
    cachedInputTokens: number;
    outputTokens: number;
    totalTokens: number;
    calls: number;
    cost: number;
  }>(
    `SELECT coalesce(sum(input_tokens), 0)::int AS "inputTokens", coalesce(sum(cached_input_tokens), 0)::int AS "cachedInputTokens",
            coalesce(sum(output_tokens), 0)::int AS "outputTokens",
            coalesce(sum(tokens), 0)::int AS "totalTokens", (count(*) FILTER (WHERE tokens > 0 OR images > 0))::int AS calls,
            coalesce(sum(cost) FILTER (WHERE currency = $2), 0)::float8 AS cost
       FROM usage_ledger
      WHERE user_id = brigade_current_user() AND conversation_id = $1 AND settled`,
    [conversationId, currency ?? null],
  );
  const { cost, ...tokens } = rows[0]!;
  return { ...tokens, cost: Math.round(cost * 1_000_000) / 1_000_000 };
}

export interface LedgerTotals {
  conversation: { tokens: number; cost: number };
  userDay: { tokens: number; cost: number };
}

/** What the user spent today (UTC) and in one conversation, calls in flight at their reservation. `db` acts for the user. */
export async function readLedgerTotals(db: pg.ClientBase, conversationId: string, currency: string): Promise<LedgerTotals> {
  const { rows } = await db.query<{ conv_tokens: number; conv_cost: number; day_tokens: number; day_cost: number }>(
    `SELECT coalesce(sum(tokens) FILTER (WHERE conversation_id = $1), 0) AS conv_tokens,
            coalesce(sum(cost) FILTER (WHERE conversation_id = $1 AND currency = $2), 0) AS conv_cost,
            coalesce(sum(tokens) FILTER (WHERE day = (now() AT TIME ZONE 'UTC')::date), 0) AS day_tokens,
            coalesce(sum(cost) FILTER (WHERE day = (now() AT TIME ZONE 'UTC')::date AND currency = $2), 0) AS day_cost
       FROM usage_ledger
      WHERE user_id = brigade_current_user() AND (conversation_id = $1 OR day = (now() AT TIME ZONE 'UTC')::date)`,
    [conversationId, currency],
  );
  const row = rows[0]!;
  return {
    conversation: { tokens: Number(row.conv_tokens), cost: Number(row.conv_cost) },
    userDay: { tokens: Number(row.day_tokens), cost: Number(row.day_cost) },
  };
}
