// The recipes agent's tool implementations, by tool name (the specs are in src/shared/tools/recipes.ts).
import { EXECUTE_RECIPE_SQL } from '../../shared/tools/recipes.ts';
import type { ToolImplementation } from '../types.ts';
import { createExecuteRecipeSql } from './sql.ts';

export const recipesImplementations: Record<string, ToolImplementation> = {
  [EXECUTE_RECIPE_SQL]: createExecuteRecipeSql(),
};
