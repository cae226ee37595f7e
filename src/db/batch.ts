// A step's writes as the user who owns the conversation, each in a transaction of its own: what the
// workflow hands a model step (then the transcript it reads), and what the step writes when it ends.
import type pg from 'pg';
import type { ChatMessage } from '../shared/messages.ts';
import { asUser } from './pool.ts';
import { type Batch, readTranscript, writeBatch } from './transcript.ts';

export interface ConversationKey {
  conversationId: string;
  userId: string;
}

/** Writes the batch; returns the messages it inserted (none on a retry that finds them written). */
export function recordBatch(pool: pg.Pool, { conversationId, userId }: ConversationKey, batch: Batch): Promise<ChatMessage[]> {
  return asUser(pool, userId, (db) => writeBatch(db, conversationId, userId, batch));
}

/** Writes the batch, then reads the whole transcript (with what was just written), in one transaction. */
export function recordAndReadTranscript(pool: pg.Pool, { conversationId, userId }: ConversationKey, batch: Batch): Promise<ChatMessage[]> {
  return asUser(pool, userId, async (db) => {
    await writeBatch(db, conversationId, userId, batch);
    return readTranscript(db, conversationId);
  });
}
