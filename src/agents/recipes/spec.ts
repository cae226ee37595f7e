// The recipes agent: finds and keeps recipes (execute_recipe_sql), and saves one through the saveRecipe
// child workflow after an approval (save_recipe).
import { defineAgent } from '../../shared/agent-spec.ts';
import { recipesTools } from './tools.ts';

export const recipesAgent = defineAgent({ name: 'recipes', tools: recipesTools });
