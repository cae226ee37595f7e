import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { Config } from '../config.ts';
import type { TaskModel } from '../model/task-model.ts';
import type { WriteOptions } from '../db/batch.ts';
import { recordToolCall, withToolCall } from '../db/tool-calls.ts';
import { storableJson } from '../shared/safe-text.ts';
import { capToolResult } from './tool-result-cap.ts';
import { resultForWorkflow } from '../shared/payload-bounds.ts';
import type { ToolImplementation } from './tool-context.ts';
import { RUNTIME_IMPLEMENTATIONS } from './runtime-tools.ts';
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
  /** `options` only from a model step that runs the tool inline and makes its commit durable itself */
  return async function runTool(input: RunToolInput, options: WriteOptions = {}): Promise<unknown> {
    const { conversationId, userId, callId, tool, args } = input;
    const implementation = implementations[tool] ?? RUNTIME_IMPLEMENTATIONS[tool];
    if (!implementation) throw new Error(`No implementation for tool ${tool}`);
    const ref = { conversationId, userId, callId };
    return withToolCall(
      pool,
      ref,
      async (db, earlier) => {
        if (earlier) return earlier.result;
        // A tool's result can carry text from elsewhere (a web page, an API); made storable like the model's,
        // and capped to what the model may be given (the record says exactly what it saw).
        const result = capToolResult(
          storableJson(
            await implementation(args, {
              db,
              userId,
              conversationId,
              callId,
              client: input.client,
              services: { config, taskModel, pool },
              ...cancellation(),
            }),
          ),
          config.TOOL_RESULT_MAX_BYTES,
        );
        await recordToolCall(db, ref, { tool, args, result });
        return result;
      },
      options,
    );
  };
}

/** The running activity's cancellation signal (its own, or the model step's that runs it inline); none outside one. */
function cancellation(): { signal?: AbortSignal } {
  try {
    return { signal: Context.current().cancellationSignal };
  } catch {
    return {};
  }
}

/**
 * runTool as the workflow's local activity: its result is a marker in history, so a large one crosses as a
 * stand-in (the record keeps it whole). The model step runs tools inline with the whole result, which never
 * leaves the worker.
 */
export const runToolActivity =
  (runTool: (input: RunToolInput) => Promise<unknown>) =>
  async (input: RunToolInput): Promise<unknown> =>
    resultForWorkflow(await runTool(input));
