import type pg from 'pg';
import { asUser } from '../db/pool.ts';
import { insertEvents, insertMessages } from '../db/transcript.ts';
import type { RecordInput } from './runtime-types.ts';

/** Writes what the workflow decided on its own (refusals, limits, pending items); idempotent by key. */
export function createRecord({ pool }: { pool: pg.Pool }) {
  return async function record({ conversationId, userId, messages, events }: RecordInput): Promise<void> {
    await asUser(pool, userId, async (db) => {
      await insertMessages(db, conversationId, userId, messages);
      await insertEvents(db, conversationId, userId, events);
    });
  };
}
