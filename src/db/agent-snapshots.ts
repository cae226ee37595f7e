// A stateful agent's state at a point of the conversation's tree (issue 45): the agent.state event the workflow
// wrote with an answer (db/migrations/049_agent_state_snapshots.sql). A branch, an edit, a regenerate and a fork
// resume from the state of their path's last answer that has one.
import type pg from 'pg';

/** The state written with the newest of `path`'s messages that has one (`path` oldest first), or undefined. */
export async function stateOnPath(db: pg.ClientBase, conversationId: string, path: readonly string[]): Promise<{ state: unknown } | undefined> {
  if (!path.length) return undefined;
  const { rows } = await db.query<{ message_id: string; state: unknown }>({
    name: 'brigade.state_on_path',
    text: `SELECT data->>'messageId' AS message_id, data->'state' AS state FROM events
            WHERE conversation_id = $1 AND type = 'agent.state' AND data->>'messageId' = ANY ($2::text[])`,
    values: [conversationId, path],
  });
  if (!rows.length) return undefined;
  const at = new Map(rows.map((row) => [row.message_id, row.state]));
  const newest = path.findLast((id) => at.has(id));
  return newest === undefined ? undefined : { state: at.get(newest) };
}
