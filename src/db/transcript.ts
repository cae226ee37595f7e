// The transcript and the event log. Every write is keyed (message id, event key) so a retried
// activity writes nothing twice. The hot statements are named: each pooled connection parses and plans
// them once instead of on every call.
import type pg from 'pg';
import type { ChatMessage, NewEvent } from '../shared/messages.ts';
import { storableJson } from '../shared/safe-text.ts';

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
export function insertMessages(db: pg.ClientBase, conversationId: string, userId: string, messages: ChatMessage[]): Promise<ChatMessage[]> {
  return writeBatch(db, conversationId, userId, { messages });
}

export interface Batch {
  messages?: ChatMessage[];
  /** written after the messages' own events, in this order */
  events?: NewEvent[];
  /** a model call's usage row, keyed by its step */
  usage?: StepUsageRow;
}

export interface StepUsageRow {
  stepId: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** An event written only when the message it belongs to is (its first write, not a retry's). */
type BatchEvent = NewEvent & { of?: string };

// One statement for messages and their events: the messages go in in order (their seq is the transcript's
// order), and each message's events (message, tool.call, tool.result) only when that message was new, then
// the batch's other events, all in the order given (event ids are the stream's order).
const WRITE_BATCH = {
  name: 'brigade.write_batch',
  text: `WITH written AS (
      INSERT INTO messages (id, conversation_id, user_id, role, text, tool_calls, call_id, tool, args, result, cards, structured)
      SELECT m.item->>'id', $1, $2, m.item->>'role', m.item->>'text', m.item->'toolCalls', m.item->>'callId', m.item->>'tool',
             m.item->'args', m.item->'result', m.item->'cards', m.item->'structured'
        FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS m(item, n)
       ORDER BY m.n
      ON CONFLICT (conversation_id, id) DO NOTHING
      RETURNING id
    ), logged AS (
      INSERT INTO events (conversation_id, user_id, key, type, data)
      SELECT $1, $2, e.item->>'key', e.item->>'type', e.item->'data'
        FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(item, n)
       WHERE NOT e.item ? 'of' OR e.item->>'of' IN (SELECT id FROM written)
       ORDER BY e.n
      ON CONFLICT (conversation_id, key) DO NOTHING
    ), counted AS (
      INSERT INTO model_usage (conversation_id, user_id, step_id, model, input_tokens, output_tokens, total_tokens)
      SELECT $1, $2, u->>'stepId', u->>'model', (u->>'inputTokens')::int, (u->>'outputTokens')::int, (u->>'totalTokens')::int
        FROM (SELECT $5::jsonb AS u) AS given
       WHERE u IS NOT NULL
      ON CONFLICT DO NOTHING
    )
    SELECT id FROM written`,
};

/**
 * Writes messages that are new, their events, the batch's other events and a model call's usage in one
 * statement (one round trip, one wake-up for subscribers); returns the messages inserted.
 */
export async function writeBatch(db: pg.ClientBase, conversationId: string, userId: string, batch: Batch): Promise<ChatMessage[]> {
  const messages = batch.messages ?? [];
  const events: BatchEvent[] = [...messages.flatMap((message) => messageEvents(message)), ...(batch.events ?? [])];
  if (!messages.length && !events.length && !batch.usage) return [];
  // Client text was refused at the API if PostgreSQL cannot store it; what the model and tools produce is
  // repaired here instead (NUL and unpaired surrogates become U+FFFD), so no reply can fail the write.
  const { rows } = await db.query<{ id: string }>({
    ...WRITE_BATCH,
    values: [
      conversationId,
      userId,
      JSON.stringify(storableJson(messages)),
      JSON.stringify(storableJson(events)),
      batch.usage ? JSON.stringify(storableJson(batch.usage)) : null,
    ],
  });
  const inserted = new Set(rows.map((row) => row.id));
  return messages.filter((message) => inserted.has(message.id));
}

function messageEvents(message: ChatMessage): BatchEvent[] {
  const of = message.id;
  const events: BatchEvent[] = [{ key: `message:${message.id}`, type: 'message', data: message, of }];
  for (const call of message.toolCalls ?? []) {
    events.push({ key: `tool-call:${call.id}`, type: 'tool.call', data: call, of });
  }
  if (message.role === 'tool') {
    events.push({
      key: `tool-result:${message.callId}`,
      type: 'tool.result',
      data: { callId: message.callId, tool: message.tool, result: message.result },
      of,
    });
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
