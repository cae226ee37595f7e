// The transcript and the event log. Every write is keyed (message id, event key) so a retried
// activity writes nothing twice; writes go through one batch statement (./batch.ts). Statements are
// named: each pooled connection parses and plans them once instead of on every call.
import type pg from 'pg';
import type { ChatMessage, NewEvent } from '../shared/messages.ts';
import { writeBatch } from './batch.ts';
import { type MessageRow, rowToMessage } from './message-row.ts';

export { rowToMessage } from './message-row.ts';

/** Inserts the messages that are new and a `message` event for each; returns the ones inserted. */
export function insertMessages(db: pg.ClientBase, conversationId: string, userId: string, messages: ChatMessage[]): Promise<ChatMessage[]> {
  return writeBatch(db, { conversationId, userId }, { messages });
}

/** The current branch's messages, from the root to the leaf (the conversation is a tree: ./conversation-tree.ts). */
export async function readTranscript(db: pg.ClientBase, conversationId: string): Promise<ChatMessage[]> {
  const { rows } = await db.query<MessageRow>({
    name: 'brigade.read_transcript',
    text: `SELECT id, role, text, tool_calls, call_id, tool, args, result, cards, structured
             FROM brigade_path($1, (SELECT leaf_id FROM conversations WHERE id = $1), true) ORDER BY depth DESC`,
    values: [conversationId],
  });
  return rows.map(rowToMessage);
}

/** Inserts the events that are new, in order (one statement, like every batch). */
export async function insertEvents(db: pg.ClientBase, conversationId: string, userId: string, events: NewEvent[]): Promise<void> {
  await writeBatch(db, { conversationId, userId }, { events });
}
