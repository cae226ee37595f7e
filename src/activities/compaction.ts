// Folding a conversation's older messages into a summary (issue 44), after a turn has answered: the workflow runs
// this as a regular activity when a step's window passed its threshold (src/context/window.ts). It reads the
// previous summary and the messages it folds, asks the task model (metered: the conversation's cost, charged once
// per fold point, so a retry does not bill twice) and stores the summary once, keyed by the last message it folds.
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { asUser } from '../db/pool.ts';
import { insertSummary, messagesToFold } from '../db/summaries.ts';
import { contextBudget } from '../model/context-size.ts';
import { SUMMARY_TASK, boundSummary, summaryCap, summaryPrompt } from '../model/summary-task.ts';
import type { TaskModel } from '../model/task-model.ts';
import { estimateTokens } from '../model/token-estimate.ts';
import type { ChatModel } from '../model/types.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { CompactInput } from './runtime-types.ts';
import { heartbeatOnClock } from './step-heartbeat.ts';
import { BudgetSpent } from './usage-meter.ts';

export interface CompactionDeps {
  pool: pg.Pool;
  catalog: AgentCatalog;
  model: ChatModel;
  taskModel: TaskModel;
  config: Partial<Pick<Config, 'MODEL_CONTEXT_TOKENS'>>;
}

/** What a compaction did: `written` once per fold point; `skipped` says why nothing was. */
export interface Compacted {
  written: boolean;
  skipped?: 'folded-already' | 'unknown-message' | 'over-budget';
}

export function createCompactConversation({ pool, catalog, model, taskModel, config }: CompactionDeps) {
  return async function compactConversation({ conversationId, userId, agent, throughMessageId }: CompactInput): Promise<Compacted> {
    // a worker that dies mid-summary stops beating, and the activity runs again elsewhere without waiting out its timeout
    const release = heartbeatOnClock(Context.current());
    try {
      const budget = contextBudget(
        model.name,
        config.MODEL_CONTEXT_TOKENS,
        catalog.has(agent) ? catalog.agent(agent).contextTokens : undefined,
      );
      const cap = summaryCap(budget);
      // the summary in force at the fold point and what follows it on that message's path (not the current leaf's:
      // a branch switched meanwhile does not change what this fold covers)
      const { previous, fold } = await asUser(pool, userId, (db) => messagesToFold(db, conversationId, throughMessageId));
      if (!fold) return { written: false, skipped: previous ? 'folded-already' : 'unknown-message' };
      let reply;
      try {
        reply = await taskModel.complete({
          // keyed by the fold point: a retried attempt reuses its reservation, and no fold is billed twice
          charge: { userId, conversationId, key: `summary:${conversationId}:${throughMessageId}` },
          task: SUMMARY_TASK,
          prompt: summaryPrompt(previous?.text, fold.messages, cap, budget),
          signal: Context.current().cancellationSignal,
        });
      } catch (error) {
        // over a budget the window keeps leaving the oldest turns out instead: no summary is worth a budget item
        if (error instanceof BudgetSpent) return { written: false, skipped: 'over-budget' };
        throw error;
      }
      const text = boundSummary(reply.text, cap);
      const written = await asUser(pool, userId, (db) =>
        insertSummary(
          db,
          { conversationId, userId },
          { throughMessageId, throughSeq: fold.throughSeq, text, tokens: estimateTokens(text), model: reply.model },
        ),
      );
      return { written };
    } finally {
      release();
    }
  };
}
