// The conversation as a tree (db/migrations/048_conversation_tree.sql): each message has a parent and the
// conversation keeps its current leaf. The person and the model read the path from the root to the leaf (the current
// branch); the other branches stay stored, for a switch back and for export.
import type pg from 'pg';
import type { ChatMessage } from '../shared/messages.ts';
import { type MessageRow, rowToMessage } from './message-row.ts';

/** Where a message stands among its siblings (the messages with the same parent), when it has any. */
export interface Siblings {
  /** its place among them, from 0 */
  index: number;
  count: number;
  /** the siblings in the order they were written, the message among them */
  ids: string[];
}

export type BranchMessage = ChatMessage & { parentId: string | null; siblings?: Siblings };
export type TreeMessage = ChatMessage & { parentId: string | null };

const COLUMNS = 'id, role, text, tool_calls, call_id, tool, args, result, cards, structured';

/** The messages of the current branch, from the root to the leaf. */
export async function readBranch(db: pg.ClientBase, conversationId: string): Promise<TreeMessage[]> {
  const { rows } = await db.query<MessageRow & { parent_id: string | null }>({
    name: 'brigade.read_branch',
    text: `SELECT ${COLUMNS}, parent_id FROM brigade_path($1, (SELECT leaf_id FROM conversations WHERE id = $1), true) ORDER BY depth DESC`,
    values: [conversationId],
  });
  return rows.map((row) => ({ ...rowToMessage(row), parentId: row.parent_id }));
}

/** The current branch as the person sees it: each message with siblings says where it stands among them. */
export async function readBranchView(db: pg.ClientBase, conversationId: string): Promise<BranchMessage[]> {
  const branch = await readBranch(db, conversationId);
  const forks = await siblingGroups(db, conversationId);
  return branch.map((message) => {
    const ids = forks.get(message.parentId);
    return ids ? { ...message, siblings: { index: ids.indexOf(message.id), count: ids.length, ids } } : message;
  });
}

/** The parents that have more than one child, each with its children in the order they were written. */
async function siblingGroups(db: pg.ClientBase, conversationId: string): Promise<Map<string | null, string[]>> {
  const { rows } = await db.query<{ parent_id: string | null; ids: string[] }>({
    name: 'brigade.sibling_groups',
    text: `SELECT parent_id, array_agg(id ORDER BY seq) AS ids FROM messages WHERE conversation_id = $1
            GROUP BY parent_id HAVING count(*) > 1`,
    values: [conversationId],
  });
  return new Map(rows.map((row) => [row.parent_id, row.ids]));
}

/** Every message of every branch (in the order they were written) and the current leaf: what export holds. */
export async function readTree(db: pg.ClientBase, conversationId: string): Promise<{ messages: TreeMessage[]; leafId: string | null }> {
  const { rows } = await db.query<MessageRow & { parent_id: string | null }>({
    name: 'brigade.read_tree',
    text: `SELECT ${COLUMNS}, parent_id FROM messages WHERE conversation_id = $1 ORDER BY seq`,
    values: [conversationId],
  });
  const leaf = await db.query<{ leaf_id: string | null }>({
    name: 'brigade.read_leaf',
    text: 'SELECT leaf_id FROM conversations WHERE id = $1',
    values: [conversationId],
  });
  return { messages: rows.map((row) => ({ ...rowToMessage(row), parentId: row.parent_id })), leafId: leaf.rows[0]?.leaf_id ?? null };
}

/** One message of the conversation with its parent, or undefined: what edit, regenerate, branch and fork check. */
export async function findTreeMessage(db: pg.ClientBase, conversationId: string, id: string): Promise<TreeMessage | undefined> {
  const { rows } = await db.query<MessageRow & { parent_id: string | null }>({
    name: 'brigade.find_tree_message',
    text: `SELECT ${COLUMNS}, parent_id FROM messages WHERE conversation_id = $1 AND id = $2`,
    values: [conversationId, id],
  });
  return rows[0] && { ...rowToMessage(rows[0]), parentId: rows[0].parent_id };
}

/** The path from the root to `id` (inclusive), oldest first: what a fork copies. */
export async function readPathTo(db: pg.ClientBase, conversationId: string, id: string): Promise<TreeMessage[]> {
  const { rows } = await db.query<MessageRow & { parent_id: string | null }>({
    name: 'brigade.read_path_to',
    text: `SELECT ${COLUMNS}, parent_id FROM brigade_path($1, $2, true) ORDER BY depth DESC`,
    values: [conversationId, id],
  });
  return rows.map((row) => ({ ...rowToMessage(row), parentId: row.parent_id }));
}

/**
 * Moves the conversation's leaf: to `messageId` itself, or with `descend` to the newest message under it (the leaf
 * of the branch last written there). Null hangs the next message at the root. Returns the new leaf.
 */
export async function setLeaf(
  db: pg.Pool | pg.ClientBase,
  key: { conversationId: string; userId: string },
  messageId: string | null,
  descend: boolean,
): Promise<string | null> {
  const { rows } = await db.query<{ leaf: string | null }>({
    name: 'brigade.set_leaf',
    text: 'SELECT brigade_set_leaf($1, $2, $3, $4) AS leaf',
    values: [key.userId, key.conversationId, messageId, descend],
  });
  return rows[0]!.leaf;
}
