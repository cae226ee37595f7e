// The recipes agent's SQL tool (seed 000's execute_recipe_sql, with seed 001's rule that INSERT goes
// through save_recipe). The guard and executor live in src/sql/; this is what the model is told.
import { z } from 'zod';
import { AUTO, defineTool } from '../tool-spec.ts';

export const EXECUTE_RECIPE_SQL = 'execute_recipe_sql';

export const executeRecipeSql = defineTool({
  name: EXECUTE_RECIPE_SQL,
  description: `Run one PostgreSQL query against the user's saved recipes (table saved_recipes). Write the SQL yourself.

Rules (enforced):
- Only SELECT and UPDATE on saved_recipes. One statement per call. No other table, no DDL.
- No DELETE: to delete a recipe, soft-delete it: UPDATE saved_recipes SET is_deleted = true WHERE id = '<uuid>'. Restore it with is_deleted = false.
- No INSERT: new recipes are saved with save_recipe.
- UPDATE needs a WHERE clause and may change one recipe at most; id, user_id, created_at and conversation_id cannot be changed.
- Every SELECT hides deleted recipes automatically and returns at most 50 rows.
- is_deleted is a boolean: write true/false, not 1/0.

Columns of saved_recipes:
- id (uuid), name (varchar 200), recipe_type ('cocktail', 'food' or 'dessert')
- ingredients (jsonb array of {name, quantity, unit, notes}), instructions (jsonb array of step strings)
- prep_time, cook_time (integer, minutes), servings (integer)
- source_references (jsonb array of URLs), notes (text), user_notes (text, the user's own notes)
- image_url (varchar 500), tags (jsonb array of strings), is_deleted (boolean)
- conversation_id (uuid), created_at, last_accessed_at (timestamptz)

Examples:
- SELECT id, name, recipe_type, tags FROM saved_recipes ORDER BY created_at DESC
- SELECT id, name FROM saved_recipes WHERE ingredients::text ILIKE '%bourbon%'
- SELECT * FROM saved_recipes WHERE id = '<uuid>'
- UPDATE saved_recipes SET servings = 4 WHERE id = '<uuid>'
- UPDATE saved_recipes SET tags = tags || '["summer"]'::jsonb WHERE id = '<uuid>'

Returns {"status": "success", "rows": [...], "count": N} for SELECT, {"status": "success", "rows_affected": N, "message": "..."} for UPDATE, or {"status": "error", "error": "...", "query": "..."} when the query is refused or fails.`,
  args: z.object({
    query: z.string().trim().min(1, 'must not be empty').max(10_000, 'must be at most 10000 characters').describe('SQL query to execute (one SELECT or UPDATE on saved_recipes)'),
  }),
  policy: AUTO,
});

export const recipesTools = [executeRecipeSql];
