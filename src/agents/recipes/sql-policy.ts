// What execute_recipe_sql may do: read and update the caller's saved recipes (row-level security and the
// tool's role do the rest), one row changed at a time, deletes as soft deletes.
import { SAFE_FUNCTIONS, SAFE_TYPES } from '../../sql/allow-lists.ts';
import type { SqlPolicy } from '../../sql/policy.ts';

export const RECIPES_TABLE = 'saved_recipes';

export const RECIPES_SQL_POLICY: SqlPolicy = {
  statements: ['select', 'update'],
  tables: {
    [RECIPES_TABLE]: {
      softDeleteColumn: 'is_deleted',
      booleanColumns: ['is_deleted'],
      immutableColumns: ['id', 'user_id', 'created_at', 'conversation_id'],
    },
  },
  maxRows: 50,
  maxUpdatedRows: 1,
  maxQueryLength: 10_000,
  functions: SAFE_FUNCTIONS,
  types: SAFE_TYPES,
  hints: {
    delete:
      "To delete a recipe, soft-delete it: UPDATE saved_recipes SET is_deleted = true WHERE id = '<id>' (restore it later with is_deleted = false)",
    insert: 'New recipes are saved with the save_recipe tool',
    narrow: "Narrow the WHERE clause to one recipe, for example WHERE id = '<id>'.",
  },
};
