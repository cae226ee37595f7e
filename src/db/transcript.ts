// The transcript and the event log. Every write is keyed (message id, event key) so a retried
// activity writes nothing twice. The hot statements are named: each pooled connection parses and plans
// them once instead of on every call.
import type pg from 'pg';
import type { ChatMessage, NewEvent } from '../shared/messages.ts';
import { storableJson, storableText } from '../shared/safe-text.ts';

interface MessageRow {
  id: string;
  role: ChatMessage['role'];
  text: string;
  tool_calls: ChatMessage['toolCalls'] | null;
  call_id: string | null;
  tool: string | null;
  args: ChatMessage['args'] | null;
  result: unknown;
  cards: ChatMessage['cards'] | null;
  structured: unknown;
}

// Client text was refused at the API if PostgreSQL cannot store it; what the model and tools produce is
// repaired here instead (NUL and unpaired surrogates become U+FFFD), so no reply can fail the write.
const json = (value: unknown) => (value === undefined ? null : JSON.stringify(storableJson(value)));

export function rowToMessage(row: MessageRow): ChatMessage {
  const message: ChatMessage = { id: row.id, role: row.role, text: row.text };
  if (row.tool_calls) message.toolCalls = row.tool_calls;
  if (row.call_id) message.callId = row.call_id;
  if (row.tool) message.tool = row.tool;
  if (row.args) message.args = row.args;
  if (row.role === 'tool') message.result = row.result;
  if (row.cards) message.cards = row.cards;
  if (row.structured !== null && row.structured !== undefined) message.structured = row.structured;
  return message;
}

/** Inserts the messages that are new and a `message` event for each; returns the ones inserted. */
export async function insertMessages(
  db: pg.ClientBase,
  conversationId: string,
  userId: string,
  messages: ChatMessage[],
): Promise<ChatMessage[]> {
  const inserted: ChatMessage[] = [];
  for (const message of messages) {
    const { rowCount } = await db.query({
      name: 'brigade.insert_message',
      text: `INSERT INTO messages (id, conversation_id, user_id, role, text, tool_calls, call_id, tool, args, result, cards, structured)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (conversation_id, id) DO NOTHING`,
      values: [
        message.id,
        conversationId,
        userId,
        message.role,
        storableText(message.text),
        json(message.toolCalls),
        message.callId ?? null,
        message.tool == null ? null : storableText(message.tool),
        json(message.args),
        json(message.result),
        json(message.cards),
        json(message.structured),
      ],
    });
    if (rowCount) inserted.push(message);
  }
  const events: NewEvent[] = inserted.flatMap((message) => messageEvents(message));
  await insertEvents(db, conversationId, userId, events);
  return inserted;
}

function messageEvents(message: ChatMessage): NewEvent[] {
  const events: NewEvent[] = [{ key: `message:${message.id}`, type: 'message', data: message }];
  for (const call of message.toolCalls ?? []) {
    events.push({ key: `tool-call:${call.id}`, type: 'tool.call', data: call });
  }
  if (message.role === 'tool') {
    events.push({ key: `tool-result:${message.callId}`, type: 'tool.result', data: { callId: message.callId, tool: message.tool, result: message.result } });
  }
  return events;
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
