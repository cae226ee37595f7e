// Every model call goes through the meter: reserved against the budgets before it is made (one atomic step
// per user in PostgreSQL), settled with the usage the model reports and its price. The chat step uses it
// directly; one-shot task calls (pipelines, images, SQL, summaries) through meteredTaskModel, which every
// activity and tool gets in place of the bare TaskModel.
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { type LedgerCall, type LedgerSettlement, reserveUsage, settleUsage } from '../db/usage-ledger.ts';
import { costOf } from '../model/prices.ts';
import type { Charge, TaskModel } from '../model/task-model.ts';
import { estimateTokens } from '../model/token-estimate.ts';
import { ModelCallError, type ModelUsage } from '../model/types.ts';
import { type BudgetExceeded, type BudgetLimits, anyLimit, budgetSettings, budgetSpentText } from '../shared/turn-control.ts';

export { budgetSettings } from '../shared/turn-control.ts';

export type MeterConfig = Partial<
  Pick<
    Config,
    | 'TOKEN_BUDGET_PER_CONVERSATION'
    | 'TOKEN_BUDGET_PER_USER_PER_DAY'
    | 'MONEY_BUDGET_PER_CONVERSATION'
    | 'MONEY_BUDGET_PER_USER_PER_DAY'
    | 'BUDGET_CURRENCY'
    | 'BUDGET_RESERVATION_TOKENS'
    | 'MODEL_PRICES'
  >
>;

export interface UsageMeter {
  /**
   * Reserves the call: what it sends (`sends()`, its input tokens estimated before the call) plus its answer's
   * allowance (BUDGET_RESERVATION_TOKENS). Answers the limit that what it sends would pass instead (nothing is
   * reserved then), so a limit is passed by one call's answer at most. No limits: no reservation, no estimate.
   */
  reserve(call: LedgerCall, limits: BudgetLimits, sends: () => number | Promise<number>): Promise<BudgetExceeded | undefined>;
  /** Settles the call with what the model reported, priced by MODEL_PRICES. */
  settle(call: LedgerCall, reported: Reported): Promise<void>;
  /** The same settlement, for a write that carries it with others (src/db/batch.ts) and saves a round trip. */
  settlement(call: LedgerCall, reported: Reported): LedgerSettlement;
}

type Reported = { model: string; usage: ModelUsage; images?: number };

export function createUsageMeter(pool: pg.Pool, config: MeterConfig): UsageMeter {
  const currency = config.BUDGET_CURRENCY ?? 'USD';
  // the answer's allowance: the providers are sent no output cap, so this is what a call's answer is held at
  const answer = config.BUDGET_RESERVATION_TOKENS ?? 4000;
  const priced = (model: string, usage: Pick<ModelUsage, 'inputTokens' | 'outputTokens' | 'cachedInputTokens'> & { images?: number }) =>
    config.MODEL_PRICES ? costOf(config.MODEL_PRICES, model, usage) : undefined;
  const settlement = (call: LedgerCall, { model, usage, images }: Reported): LedgerSettlement => {
    const cost = priced(model, { ...usage, ...(images ? { images } : {}) });
    return { call, used: { ...usage, ...(images ? { images } : {}), cost } };
  };
  return {
    async reserve(call, limits, sends) {
      if (!anyLimit(limits)) return undefined;
      const inputTokens = await sends();
      const amount = (cost: ReturnType<typeof priced>) => (cost && cost.currency === currency ? cost.amount : 0);
      const whole = priced(call.model, { inputTokens, outputTokens: answer, ...(call.kind === 'image' ? { images: 1 } : {}) });
      const sent = priced(call.model, { inputTokens, outputTokens: 0 });
      return reserveUsage(
        pool,
        call,
        { tokens: inputTokens + answer, cost: amount(whole), currency, fitTokens: inputTokens, fitCost: amount(sent) },
        limits,
      );
    },
    settlement,
    async settle(call, reported) {
      await settleUsage(pool, settlement(call, reported));
    },
  };
}

/** A task call refused because a budget is spent: not retryable, said in words. */
export class BudgetSpent extends ModelCallError {
  readonly over: BudgetExceeded;
  constructor(over: BudgetExceeded) {
    super(`${budgetSpentText(over)}, so the model was not asked.`, { retryable: false });
    this.over = over;
  }
}

/**
 * The task model every activity and tool gets: each call reserved (what its request sends, estimated, plus its
 * answer's allowance) and settled in the ledger under its request's `charge`. A task call is held to the
 * user's daily budgets (a conversation's budget and its approvals belong to the turn, which checks them before
 * it asks the model for the step that led here), and to the conversation's when its charge says so.
 */
export function meteredTaskModel(inner: TaskModel, meter: UsageMeter, config: MeterConfig): TaskModel {
  const settings = budgetSettings(config);
  const userDay: BudgetLimits = {
    ...(settings.perUserPerDay ? { userDay: settings.perUserPerDay } : {}),
    ...(settings.moneyPerUserPerDay ? { userDayMoney: settings.moneyPerUserPerDay } : {}),
  };
  // a call no turn checked (a title) is held to its conversation's budgets too, at their base limits
  const withConversation: BudgetLimits = {
    ...userDay,
    ...(settings.perConversation ? { conversation: settings.perConversation } : {}),
    ...(settings.moneyPerConversation ? { conversationMoney: settings.moneyPerConversation } : {}),
  };
  const limitsOf = (charge: Charge) => (charge.conversationBudget && charge.conversationId ? withConversation : userDay);
  const callOf = (charge: Charge, kind: LedgerCall['kind'], task: string, model: string): LedgerCall => ({
    userId: charge.userId,
    key: charge.key,
    conversationId: charge.conversationId,
    kind,
    task,
    model,
  });
  const none = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  // A call that failed reported no usage: it settles at nothing rather than holding its reservation all day.
  const failed =
    (call: LedgerCall) =>
    async (error: unknown): Promise<never> => {
      await meter.settle(call, { model: call.model, usage: none }).catch(() => undefined);
      throw error;
    };
  return {
    name: inner.name,
    offline: inner.offline,
    ...(inner.imageModel ? { imageModel: inner.imageModel } : {}),
    async complete(request) {
      const call = callOf(request.charge, 'task', request.task, request.model ?? inner.name);
      const sends = () => estimateTokens(`${request.system ?? ''}${request.prompt}${request.schema ? JSON.stringify(request.schema) : ''}`);
      const over = await meter.reserve(call, limitsOf(request.charge), sends);
      if (over) throw new BudgetSpent(over);
      const reply = await inner.complete(request).catch(failed(call));
      await meter.settle(call, { model: reply.model, usage: reply.usage });
      return reply;
    },
    async image(request) {
      const call = callOf(request.charge, 'image', request.task, inner.imageModel ?? inner.name);
      const over = await meter.reserve(call, limitsOf(request.charge), () => estimateTokens(request.prompt));
      if (over) throw new BudgetSpent(over);
      const reply = await inner.image(request).catch(failed(call));
      await meter.settle(call, { model: reply.model, usage: reply.usage ?? none, images: 1 });
      return reply;
    },
  };
}

/**
 * A key for a task call of the running activity: the workflow, the activity's id within it, the attempt
 * (each attempt's calls are calls of their own) and what the call is.
 */
export function activityCallKey(label: string): string {
  const info = Context.current().info;
  return `task:${info.workflowExecution?.workflowId ?? info.workflowType}:${info.activityId}:${info.attempt}:${label}`;
}

/** A key for a task call a tool makes: its conversation, its call id, the attempt running it, and what the call is. */
export function toolCallKey(tool: { conversationId: string; callId: string }, label: string): string {
  let attempt = 0;
  try {
    attempt = Context.current().info.attempt;
  } catch {
    // outside an activity (a tool called directly): one attempt
  }
  return `task:${tool.conversationId}:${tool.callId}:${attempt}:${label}`;
}
