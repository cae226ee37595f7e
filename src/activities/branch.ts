// Moving a conversation's leaf (issue 45): what an edit, a regenerate and a branch switch do before their turn, as a
// short transaction with the event that tells the conversation's clients the current branch changed. Idempotent: a
// retry moves the leaf to the same place and writes the event once (its key is the move's).
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { writeBatch } from '../db/batch.ts';
import { readPathTo, setLeaf } from '../db/conversation-tree.ts';
import { asUser } from '../db/pool.ts';
import type { LeafMoved, MoveLeafInput } from './runtime-types.ts';
import { stateOnPath } from '../db/agent-snapshots.ts';

export function createMoveLeaf({ pool }: { pool: pg.Pool }) {
  return async function moveLeaf({
    conversationId,
    userId,
    messageId,
    descend,
    reason,
    key,
    withState,
  }: MoveLeafInput): Promise<LeafMoved> {
    const ref = { conversationId, userId };
    return asUser(pool, userId, async (db) => {
      const leafId = await setLeaf(db, ref, messageId, descend).catch((error: unknown) => {
        // the API checked the message; one that is not there is an answer, not a failure to retry
        if ((error as { code?: string }).code === 'P0002')
          throw ApplicationFailure.nonRetryable('No such message in this conversation', 'NotFound');
        throw error;
      });
      await writeBatch(db, ref, { events: [{ key: `branch:${key}`, type: 'branch.changed', data: { leafId, reason } }] });
      if (!withState || leafId === null) return { leafId };
      const path = await readPathTo(db, conversationId, leafId);
      const kept = await stateOnPath(
        db,
        conversationId,
        path.map((message) => message.id),
      );
      return kept ? { leafId, state: { value: kept.state } } : { leafId };
    });
  };
}
