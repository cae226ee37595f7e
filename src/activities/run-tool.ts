import type pg from 'pg';
import type { Config } from '../config.ts';
import type { TaskModel } from '../model/task-model.ts';
import { asUser } from '../db/pool.ts';
import { insertMessages } from '../db/transcript.ts';
import { storableJson } from '../shared/safe-text.ts';
import { toolMessage } from '../shared/tool-message.ts';
import type { ToolImplementation } from '../tools/types.ts';
import type { RunToolInput } from './runtime-types.ts';

export interface RunToolDeps {
  pool: pg.Pool;
  implementations: Record<string, ToolImplementation>;
  config: Config;
  taskModel: TaskModel;
}

/**
 * Runs a tool exactly once per call id: the effect, the record of the call and the tool message commit in
 * one transaction, and a retry that finds the record returns its result instead of acting again.
 */
export function createRunTool({ pool, implementations, config, taskModel }: RunToolDeps) {
  return async function runTool(input: RunToolInput): Promise<unknown> {
    const { conversationId, userId, callId, tool, args } = input;
    const implementation = implementations[tool];
    if (!implementation) throw new Error(`No implementation for tool ${tool}`);
    return asUser(pool, userId, async (db) => {
      const done = await db.query({
        name: 'brigade.tool_call_done',
        text: 'SELECT result FROM tool_calls WHERE conversation_id = $1 AND call_id = $2',
        values: [conversationId, callId],
      });
      if (done.rows[0]) return done.rows[0].result as unknown;

      // A tool's result can carry text from elsewhere (a web page, an API); made storable like the model's.
      const result = storableJson(
        await implementation(args, {
          db,
          userId,
          conversationId,
          callId,
          client: input.client,
          services: { config, taskModel, pool },
        }),
      );
      await db.query({
        name: 'brigade.insert_tool_call',
        text: 'INSERT INTO tool_calls (conversation_id, user_id, call_id, tool, args, result) VALUES ($1, $2, $3, $4, $5, $6)',
        values: [conversationId, userId, callId, tool, JSON.stringify(args), JSON.stringify(result ?? null)],
      });
      await insertMessages(db, conversationId, userId, [toolMessage({ id: callId, name: tool }, args, result)]);
      return result;
    });
  };
}
