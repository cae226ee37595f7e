// A tool call runs once per call id: its effect, its record and its tool message commit in one transaction,
// and an attempt that finds the record returns its result instead of acting again.
import type pg from 'pg';
import type { JsonObject } from '../shared/messages.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { type ConversationKey, type WriteOptions, writeBatch } from './batch.ts';
import { DEFER_COMMIT_SQL } from './commit-durability.ts';
import { inTransaction } from './pool.ts';

export interface ToolCallRef extends ConversationKey {
  callId: string;
}

const FIND_RESULT = { name: 'brigade.tool_call_result', text: 'SELECT result FROM brigade_tool_call_result($1, $2, $3)' };
// The same lookup in a transaction that commits deferred, in one round trip: always one row (the left side is
// what runs set_config), and `found` tells a record whose result is JSON null from none (the column is NOT NULL).
const FIND_RESULT_DEFERRED = {
  name: 'brigade.tool_call_result_deferred',
  text: `SELECT found.result, found.result IS NOT NULL AS found
           FROM ${DEFER_COMMIT_SQL} AS deferred
           LEFT JOIN brigade_tool_call_result($1, $2, $3) AS found ON true`,
};

/**
 * A transaction acting for the user, opened with the call's record looked up in the same round trip:
 * `fn` gets the earlier attempt's result (`{ result }`), or undefined when the call is still to run.
 */
export function withToolCall<T>(
  pool: pg.Pool,
  { conversationId, userId, callId }: ToolCallRef,
  fn: (db: pg.PoolClient, earlier: { result: unknown } | undefined) => Promise<T>,
  options: WriteOptions = {},
): Promise<T> {
  const values = [userId, conversationId, callId];
  return inTransaction(pool, async (db) => {
    if (!options.deferCommit) return fn(db, (await db.query<{ result: unknown }>({ ...FIND_RESULT, values })).rows[0]);
    const { rows } = await db.query<{ result: unknown; found: boolean }>({ ...FIND_RESULT_DEFERRED, values });
    return fn(db, rows[0]!.found ? { result: rows[0]!.result } : undefined);
  });
}

/**
 * Records the call and its tool message (with its message and tool.result events) in one statement. The
 * record is not skipped when it exists: an attempt that ran concurrently fails here and its effect rolls back.
 */
export async function recordToolCall(
  db: pg.ClientBase,
  { conversationId, userId, callId }: ToolCallRef,
  call: { tool: string; args: JsonObject; result: unknown },
): Promise<void> {
  await writeBatch(db, { conversationId, userId }, {
    toolCall: { callId, ...call },
    messages: [toolMessage({ id: callId, name: call.tool }, call.args, call.result)],
  });
}
