// The recipes agent's SQL tool (execute_recipe_sql; an INSERT is refused, since a new recipe goes through
// save_recipe and its approval). The guard and executor live in src/sql/; this is what the model is told.
import { z } from 'zod';
import { AUTO, NEEDS_APPROVAL, defineChildTool, defineTool } from '../../shared/tool-spec.ts';

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
    query: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(10_000, 'must be at most 10000 characters')
      .describe('SQL query to execute (one SELECT or UPDATE on saved_recipes)'),
  }),
  policy: AUTO,
});

export const SAVE_RECIPE = 'save_recipe';

/** save_recipe: one raw text in; after an approval a child workflow (saveRecipe) does the rest. */
export const SaveRecipeArgs = z.object({
  raw_recipe_data: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(20_000, 'must be at most 20000 characters')
    .describe(
      'Unstructured recipe information from the conversation: name, type, ingredients with quantities, steps, times, servings, sources, tips',
    ),
});
export type SaveRecipeArgs = z.infer<typeof SaveRecipeArgs>;

export const saveRecipeSpec = defineChildTool({
  name: SAVE_RECIPE,
  description: `Save a recipe to the user's personal collection, with a generated image. The user must approve the save first (they may also edit the text or reject it with a reason).

When to use: only when the user explicitly asks to save or keep a recipe ("save this", "keep this recipe", "add to favorites") or says yes after you offered to save it. Do not save just because the user likes a recipe: ask first.

What it does: structures the raw recipe (name, ingredients, instructions), writes an image prompt, generates a food photograph, uploads it, and stores the recipe.

What to put in raw_recipe_data: the recipe name; every ingredient with quantity and unit; step-by-step instructions; prep time and cook time in minutes; servings; the type ("cocktail", "food" or "dessert"); source URLs; tips or variations. Example: "Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. Prep time: 5 minutes. Serves: 1. Type: cocktail."

Returns {"status": "saved", "recipe_id", "recipe_name", "image_url" (may be null when no image could be made), "message"} or {"status": "error", "error"}. After a save, tell the user and show them the image_url. To change or delete a saved recipe later, use execute_recipe_sql (UPDATE, or the soft delete).`,
  args: SaveRecipeArgs,
  policy: NEEDS_APPROVAL,
  runner: { kind: 'child', workflow: 'saveRecipe', idPrefix: 'save-recipe' },
});

export const recipesTools = [executeRecipeSql, saveRecipeSpec];
