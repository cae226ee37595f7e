// A model step's token usage as the step wrote it (model_usage, keyed by conversation and step): what a retried
// step hands the workflow again when an earlier attempt had written its answer.
import type pg from 'pg';
import { asUser } from './pool.ts';
import type { ConversationKey, StepUsageRow } from './batch.ts';

export async function readStepUsage(pool: pg.Pool, { conversationId, userId }: ConversationKey, stepId: string): Promise<Omit<StepUsageRow, 'stepId'>> {
  return asUser(pool, userId, async (db) => {
    const { rows } = await db.query<Omit<StepUsageRow, 'stepId'>>(
      `SELECT model, input_tokens AS "inputTokens", output_tokens AS "outputTokens", total_tokens AS "totalTokens"
         FROM model_usage WHERE conversation_id = $1 AND step_id = $2`,
      [conversationId, stepId],
    );
    return rows[0] ?? { model: 'unknown', inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  });
}
