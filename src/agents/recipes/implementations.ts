// The recipes agent's tool implementations, by tool name, checked against its tool list (tools.ts);
// save_recipe is the saveRecipe child workflow's.
import type { ToolImplementation, ToolImplementations } from '../../activities/tool-context.ts';
import { createExecuteRecipeSql } from './sql-tool.ts';
import { EXECUTE_RECIPE_SQL, type recipesTools } from './tools.ts';

const implementations: ToolImplementations<typeof recipesTools> = {
  [EXECUTE_RECIPE_SQL]: createExecuteRecipeSql(),
};

/** The same, by any name (runTool looks a tool up by the name the model used). */
export const recipesImplementations: Readonly<Record<string, ToolImplementation>> = implementations;
