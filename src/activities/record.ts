import type pg from 'pg';
import { writeBatch } from '../db/batch.ts';
import type { RecordInput } from './runtime-types.ts';

/** Writes what the workflow decided on its own (refusals, limits, pending items); idempotent by key. */
export function createRecord({ pool }: { pool: pg.Pool }) {
  return async function record({ conversationId, userId, messages, events }: RecordInput): Promise<void> {
    await writeBatch(pool, { conversationId, userId }, { messages, events });
  };
}
