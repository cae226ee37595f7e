// A conversation's summaries (db/migrations/046_conversation_summaries.sql): what a model step reads instead of
// the messages they fold. Each is written once, keyed by the last message it folds, and versioned.
import type pg from 'pg';
import type { ChatMessage } from '../shared/messages.ts';
import { type MessageRow, rowToMessage } from './message-row.ts';

export interface ConversationSummary {
  text: string;
  /** the last message it folds: the model reads the messages after it */
  throughMessageId: string;
  version: number;
  tokens: number;
}

export interface StoredSummary extends ConversationSummary {
  throughSeq: number;
  model: string;
  createdAt: string;
}

interface SummaryRow {
  text: string;
  through_message_id: string;
  through_seq: string;
  version: number;
  tokens: number;
  model: string;
  created_at: Date;
}

const toSummary = (row: SummaryRow): StoredSummary => ({
  text: row.text,
  throughMessageId: row.through_message_id,
  throughSeq: Number(row.through_seq),
  version: row.version,
  tokens: row.tokens,
  model: row.model,
  createdAt: row.created_at.toISOString(),
});

/** The conversation's latest summary (the one that folds the most), if it has one. */
export async function latestSummary(db: pg.ClientBase, conversationId: string): Promise<StoredSummary | undefined> {
  const { rows } = await db.query<SummaryRow>({
    name: 'brigade.latest_summary',
    text: `SELECT text, through_message_id, through_seq, version, tokens, model, created_at FROM conversation_summaries
            WHERE conversation_id = $1 ORDER BY through_seq DESC LIMIT 1`,
    values: [conversationId],
  });
  return rows[0] && toSummary(rows[0]);
}

/** What a summary through `throughMessageId` folds: the messages after `afterSeq` up to it (seq order); none if it is unknown. */
export async function messagesToFold(
  db: pg.ClientBase,
  conversationId: string,
  afterSeq: number,
  throughMessageId: string,
): Promise<{ messages: ChatMessage[]; throughSeq: number } | undefined> {
  const { rows } = await db.query<MessageRow & { seq: string }>({
    name: 'brigade.messages_to_fold',
    text: `SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured, m.seq
             FROM messages AS m
            WHERE m.conversation_id = $1 AND m.seq > $2
              AND m.seq <= (SELECT t.seq FROM messages AS t WHERE t.conversation_id = $1 AND t.id = $3)
            ORDER BY m.seq`,
    values: [conversationId, afterSeq, throughMessageId],
  });
  if (!rows.length) return undefined;
  return { messages: rows.map(rowToMessage), throughSeq: Number(rows.at(-1)!.seq) };
}

/** Stores a summary once: a second write through the same message (a retry, a repeated compaction) does nothing. */
export async function insertSummary(
  db: pg.ClientBase,
  key: { conversationId: string; userId: string },
  summary: Omit<StoredSummary, 'createdAt' | 'version'>,
): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'brigade.insert_summary',
    text: `INSERT INTO conversation_summaries (conversation_id, user_id, through_message_id, through_seq, version, text, tokens, model)
           SELECT $1, $2, $3, $4, coalesce(max(s.version), 0) + 1, $5, $6, $7 FROM conversation_summaries AS s WHERE s.conversation_id = $1
           ON CONFLICT (conversation_id, through_message_id) DO NOTHING`,
    values: [key.conversationId, key.userId, summary.throughMessageId, summary.throughSeq, summary.text, summary.tokens, summary.model],
  });
  return rowCount === 1;
}

/** One message of the conversation by id (what recall reads), or undefined. */
export async function readMessage(db: pg.ClientBase, conversationId: string, id: string): Promise<ChatMessage | undefined> {
  const { rows } = await db.query<MessageRow>({
    name: 'brigade.read_message',
    text: `SELECT id, role, text, tool_calls, call_id, tool, args, result, cards, structured FROM messages
            WHERE conversation_id = $1 AND id = $2`,
    values: [conversationId, id],
  });
  return rows[0] && rowToMessage(rows[0]);
}
