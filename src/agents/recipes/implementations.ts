// The recipes agent's tool implementations, by tool name (the specs are in src/shared/tools/recipes.ts).
import { EXECUTE_RECIPE_SQL } from './tools.ts';
import type { ToolImplementation } from '../../activities/tool-context.ts';
import { createExecuteRecipeSql } from './sql-tool.ts';

export const recipesImplementations: Record<string, ToolImplementation> = {
  [EXECUTE_RECIPE_SQL]: createExecuteRecipeSql(),
};
