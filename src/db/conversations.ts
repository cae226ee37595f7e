import type pg from 'pg';
import type { AgentName } from '../shared/messages.ts';

export interface ConversationRow {
  id: string;
  userId: string;
  agent: AgentName;
  client: string | null;
  title: string;
  workflowId: string;
  createdAt: string;
}

const COLUMNS = `id, user_id AS "userId", agent, client, title, workflow_id AS "workflowId", created_at AS "createdAt"`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function insertConversation(db: pg.ClientBase, row: Omit<ConversationRow, 'createdAt'>): Promise<ConversationRow> {
  const { rows } = await db.query<ConversationRow>(
    `INSERT INTO conversations (id, user_id, agent, client, title, workflow_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [row.id, row.userId, row.agent, row.client, row.title, row.workflowId],
  );
  return rows[0]!;
}

/** Row-level security hides other users' rows, so "not yours" and "not there" look the same. */
export async function findConversation(db: pg.ClientBase, id: string): Promise<ConversationRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await db.query<ConversationRow>(`SELECT ${COLUMNS} FROM conversations WHERE id = $1`, [id]);
  return rows[0];
}

export async function listConversations(db: pg.ClientBase, limit: number): Promise<ConversationRow[]> {
  const { rows } = await db.query<ConversationRow>(`SELECT ${COLUMNS} FROM conversations ORDER BY created_at DESC LIMIT $1`, [limit]);
  return rows;
}

export async function readUsage(db: pg.ClientBase, conversationId: string) {
  const { rows } = await db.query(
    `SELECT coalesce(sum(input_tokens), 0)::int AS "inputTokens", coalesce(sum(output_tokens), 0)::int AS "outputTokens",
            coalesce(sum(total_tokens), 0)::int AS "totalTokens", count(*)::int AS calls
       FROM model_usage WHERE conversation_id = $1`,
    [conversationId],
  );
  return rows[0] as { inputTokens: number; outputTokens: number; totalTokens: number; calls: number };
}

export interface EventRow {
  id: number;
  type: string;
  data: unknown;
  createdAt: string;
}

export async function readEventsAfter(db: pg.ClientBase, conversationId: string, afterId: number, limit = 500): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT id, type, data, created_at AS "createdAt" FROM events WHERE conversation_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
    [conversationId, afterId, limit],
  );
  return rows;
}

/** The id of the conversation's newest event, or 0 before its first. */
export async function newestEventId(db: pg.ClientBase, conversationId: string): Promise<number> {
  const { rows } = await db.query<{ id: number }>('SELECT coalesce(max(id), 0) AS id FROM events WHERE conversation_id = $1', [conversationId]);
  return rows[0]!.id;
}

/** A new title for the acting user's conversation (row-level security); false when it is not theirs. */
export async function renameConversation(db: pg.ClientBase, id: string, title: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  const { rowCount } = await db.query('UPDATE conversations SET title = $2 WHERE id = $1', [id, title]);
  return rowCount === 1;
}

/**
 * The title made from the first exchange, only while the conversation still has the title it started with:
 * a rename in the meantime wins, and a retried write changes nothing.
 */
export async function replaceDefaultTitle(db: pg.ClientBase, id: string, from: string, to: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE conversations SET title = $3 WHERE id = $1 AND title = $2', [id, from, to]);
  return rowCount === 1;
}
