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

const SUMMARY_COLUMNS = 's.text, s.through_message_id, s.through_seq, s.version, s.tokens, s.model, s.created_at';

/**
 * The summary in force on the current branch: the one that folds the newest ancestor of the leaf, if any (a branch
 * that left the summarised prefix reads no summary of messages not on its path).
 */
export async function latestSummary(db: pg.ClientBase, conversationId: string): Promise<StoredSummary | undefined> {
  const { rows } = await db.query<SummaryRow>({
    name: 'brigade.latest_summary',
    text: `SELECT ${SUMMARY_COLUMNS}
             FROM brigade_path($1, (SELECT leaf_id FROM conversations WHERE id = $1), false) AS p
             JOIN conversation_summaries AS s ON s.conversation_id = $1 AND s.through_message_id = p.id
            WHERE p.folded`,
    values: [conversationId],
  });
  return rows[0] && toSummary(rows[0]);
}

/**
 * What a summary through `throughMessageId` would fold: the summary in force there (`previous`) and the messages on
 * the path after it up to `throughMessageId` (oldest first). No `fold` when that message is folded already or unknown.
 */
export async function messagesToFold(
  db: pg.ClientBase,
  conversationId: string,
  throughMessageId: string,
): Promise<{ previous?: StoredSummary; fold?: { messages: ChatMessage[]; throughSeq: number } }> {
  const { rows } = await db.query<MessageRow & { seq: string; folded: boolean }>({
    name: 'brigade.messages_to_fold',
    text: `SELECT id, role, text, tool_calls, call_id, tool, args, result, cards, structured, seq, folded
             FROM brigade_path($1, $2, false) ORDER BY depth DESC`,
    values: [conversationId, throughMessageId],
  });
  const top = rows[0];
  const previous = top?.folded
    ? (
        await db.query<SummaryRow>({
          name: 'brigade.summary_through',
          text: `SELECT ${SUMMARY_COLUMNS} FROM conversation_summaries AS s WHERE s.conversation_id = $1 AND s.through_message_id = $2`,
          values: [conversationId, top.id],
        })
      ).rows.map(toSummary)[0]
    : undefined;
  const folding = rows.filter((row) => !row.folded);
  if (!folding.length) return previous ? { previous } : {};
  return {
    ...(previous ? { previous } : {}),
    fold: { messages: folding.map(rowToMessage), throughSeq: Number(folding.at(-1)!.seq) },
  };
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
