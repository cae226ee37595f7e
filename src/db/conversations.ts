import type pg from 'pg';
import type { AgentName } from '../shared/messages.ts';
import { containsPattern } from '../shared/like-pattern.ts';

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

/** Where a page of the list ends: the last row's creation time (to the microsecond) and id. */
export interface ListPosition {
  createdAt: string;
  id: string;
}

/**
 * The caller's conversations, newest first, after `after` when given (keyset: a page is the same whatever was
 * created or deleted meanwhile). Returns one row more than `limit` when there is more, for the caller to see.
 */
export async function listConversations(db: pg.ClientBase, limit: number, after?: ListPosition): Promise<(ConversationRow & { position: ListPosition })[]> {
  const { rows } = await db.query<ConversationRow & { exactCreatedAt: string }>(
    `SELECT ${COLUMNS}, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "exactCreatedAt" FROM conversations
      WHERE $2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid)
      ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit + 1, after?.createdAt ?? null, after?.id ?? null],
  );
  return rows.map(({ exactCreatedAt, ...row }) => ({ ...row, position: { createdAt: exactCreatedAt, id: row.id } }));
}

/** Where a page of the activity-ordered list ends: the last row's last activity (to the microsecond) and id. */
export interface ActivityPosition {
  at: string;
  id: string;
}


/**
 * The caller's conversations (row-level security), the most recently active first: a conversation's last
 * activity is its newest event (every message writes one, so a message counts too), or its creation when it has
 * none. With `search`, only those whose title or one of the person's own messages contains it (any case), each with
 * the newest of those messages (`matched`; null when only the title has it).
 * Keyset paged after `after`; one row more than `limit` when there is more. Each conversation's newest event is
 * one probe of events_conversation_time (036), so the list costs one probe per conversation of the caller's.
 */
export async function listByActivity(
  db: pg.ClientBase,
  { limit, after, search }: { limit: number; after?: ActivityPosition; search?: string },
): Promise<(ConversationRow & { lastActivityAt: string; matched: string | null; position: ActivityPosition })[]> {
  const { rows } = await db.query<ConversationRow & { lastActivityAt: string; matched: string | null }>(
    `SELECT id, "userId", agent, client, title, "workflowId", "createdAt",
            to_char(last_activity AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "lastActivityAt",
            CASE WHEN $4::text IS NOT NULL THEN
              (SELECT m.text FROM messages m
                WHERE m.conversation_id = listed.id AND m.role = 'user' AND m.text ILIKE $4 ESCAPE '\\'
                ORDER BY m.seq DESC LIMIT 1)
            END AS matched
       FROM (SELECT c.id, c.user_id AS "userId", c.agent, c.client, c.title, c.workflow_id AS "workflowId", c.created_at AS "createdAt",
                    greatest(c.created_at, (SELECT max(e.created_at) FROM events e WHERE e.conversation_id = c.id)) AS last_activity
               FROM conversations c
              WHERE $4::text IS NULL
                 OR c.title ILIKE $4 ESCAPE '\\'
                 OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'user' AND m.text ILIKE $4 ESCAPE '\\')) listed
      WHERE $2::timestamptz IS NULL OR (last_activity, id) < ($2::timestamptz, $3::uuid)
      ORDER BY last_activity DESC, id DESC LIMIT $1`,
    [limit + 1, after?.at ?? null, after?.id ?? null, search === undefined ? null : containsPattern(search)],
  );
  return rows.map((row) => ({ ...row, position: { at: row.lastActivityAt, id: row.id } }));
}

export interface EventRow {
  /** the event's place in its conversation (1, 2, 3, …): what clients see as its id */
  id: number;
  type: string;
  data: unknown;
  createdAt: string;
}

/**
 * A conversation's events after the table row `afterRowId` (the global bigserial, never shown to a client),
 * each with its place in the conversation counted on from `afterSeq`. Events are append-only and a
 * conversation's commit in order, so the count goes on where the last page ended.
 */
export async function readEventsAfter(
  db: pg.ClientBase,
  conversationId: string,
  after: { rowId: number; seq: number } | 0,
  limit = 500,
): Promise<(EventRow & { rowId: number })[]> {
  if (after === 0) after = { rowId: 0, seq: 0 };
  const { rows } = await db.query<Omit<EventRow, 'id'> & { rowId: number }>(
    `SELECT id AS "rowId", type, data, created_at AS "createdAt" FROM events WHERE conversation_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
    [conversationId, after.rowId, limit],
  );
  const { seq } = after;
  return rows.map((row, index) => ({ ...row, id: seq + index + 1 }));
}

/**
 * Where a client's Last-Event-ID (a place in the conversation) is in the table: the row of its `seq`-th event,
 * or the newest row (and its place) when the conversation has fewer events ("nothing yet").
 */
export async function eventPosition(db: pg.ClientBase, conversationId: string, seq: number): Promise<{ rowId: number; seq: number }> {
  if (seq <= 0) return { rowId: 0, seq: 0 };
  const { rows } = await db.query<{ rowId: number }>('SELECT id AS "rowId" FROM events WHERE conversation_id = $1 ORDER BY id OFFSET $2 LIMIT 1', [
    conversationId,
    seq - 1,
  ]);
  if (rows[0]) return { rowId: rows[0].rowId, seq };
  const newest = await db.query<{ rowId: number; count: number }>(
    'SELECT coalesce(max(id), 0) AS "rowId", count(*)::int AS count FROM events WHERE conversation_id = $1',
    [conversationId],
  );
  return { rowId: newest.rows[0]!.rowId, seq: newest.rows[0]!.count };
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
