// The transcript and the event log. Every write is keyed (message id, event key) so a retried
// activity writes nothing twice. The hot statements are named: each pooled connection parses and plans
// them once instead of on every call.
import type pg from 'pg';
import type { ChatMessage, NewEvent } from '../shared/messages.ts';
import { storableJson } from '../shared/safe-text.ts';
import { writeBatch } from './batch.ts';
import { type MessageRow, rowToMessage } from './message-row.ts';

export { rowToMessage } from './message-row.ts';

/** Inserts the messages that are new and a `message` event for each; returns the ones inserted. */
export function insertMessages(db: pg.ClientBase, conversationId: string, userId: string, messages: ChatMessage[]): Promise<ChatMessage[]> {
  return writeBatch(db, { conversationId, userId }, { messages });
}

export async function readTranscript(db: pg.ClientBase, conversationId: string): Promise<ChatMessage[]> {
  const { rows } = await db.query<MessageRow>({
    name: 'brigade.read_transcript',
    text: 'SELECT id, role, text, tool_calls, call_id, tool, args, result, cards, structured FROM messages WHERE conversation_id = $1 ORDER BY seq',
    values: [conversationId],
  });
  return rows.map(rowToMessage);
}

export async function insertEvents(db: pg.ClientBase, conversationId: string, userId: string, events: NewEvent[]): Promise<void> {
  if (!events.length) return;
  // One statement for the batch: deltas and bookkeeping arrive in bursts.
  await db.query({
    name: 'brigade.insert_events',
    text: `INSERT INTO events (conversation_id, user_id, key, type, data)
     SELECT $1, $2, e.key, e.type, e.data
       FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS a(item, n),
            jsonb_to_record(a.item) AS e(key text, type text, data jsonb)
      ORDER BY a.n
     ON CONFLICT (conversation_id, key) DO NOTHING`,
    values: [conversationId, userId, JSON.stringify(storableJson(events))],
  });
}
