// The breweries this conversation was already offered: the recommend_breweries results it kept (a stopped
// run's result never joined it). A new recommendation leaves them out unless the person asks for them again.
import type pg from 'pg';
import { asUser } from '../../db/pool.ts';

export async function recommendedBefore(pool: pg.Pool, userId: string, conversationId: string): Promise<string[]> {
  return asUser(pool, userId, async (db) => {
    const { rows } = await db.query<{ id: string }>(
      `SELECT DISTINCT b->>'brewery_id' AS id
         FROM messages m, jsonb_array_elements(CASE WHEN jsonb_typeof(m.result->'breweries') = 'array'
                                                     THEN m.result->'breweries' ELSE '[]'::jsonb END) AS b
        WHERE m.conversation_id = $1 AND m.role = 'tool' AND m.tool = 'recommend_breweries' AND b ? 'brewery_id'`,
      [conversationId],
    );
    return rows.map((row) => row.id).filter((id) => id && id !== 'Unavailable');
  });
}
