// The recipes agent's tool implementations, by tool name (the specs are in src/shared/tools/recipes.ts).
import { ConfigSchema } from '../../config.ts';
import { EXECUTE_RECIPE_SQL } from '../../shared/tools/recipes.ts';
import type { ToolImplementation } from '../types.ts';
import { createExecuteRecipeSql } from './sql.ts';

// Tool implementations are built without the worker's config (src/worker.ts passes a static record), so
// the one setting this tool needs is read from the environment, validated the same way, at each call.
const statementTimeoutMs = () => ConfigSchema.shape.SQL_STATEMENT_TIMEOUT.parse(process.env.SQL_STATEMENT_TIMEOUT || undefined);

export const recipesImplementations: Record<string, ToolImplementation> = {
  [EXECUTE_RECIPE_SQL]: createExecuteRecipeSql({ statementTimeoutMs }),
};
