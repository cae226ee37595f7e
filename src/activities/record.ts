import type pg from 'pg';
import { asUser } from '../db/pool.ts';
import { writeBatch } from '../db/transcript.ts';
import type { RecordInput } from './runtime-types.ts';

/** Writes what the workflow decided on its own (refusals, limits, pending items); idempotent by key. */
export function createRecord({ pool }: { pool: pg.Pool }) {
  return async function record({ conversationId, userId, messages, events }: RecordInput): Promise<void> {
    await asUser(pool, userId, (db) => writeBatch(db, conversationId, userId, { messages, events }));
  };
}
