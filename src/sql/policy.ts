// What a guarded SQL tool may do, as data: the recipes tool's policy is below; the beer agent's
// analytical tool can describe its own (read-only, its views, its row limit) with the same shape.
import { SAFE_FUNCTIONS, SAFE_TYPES } from './allow-lists.ts';

export type StatementKind = 'select' | 'update';

export interface TablePolicy {
  /** a boolean column meaning "deleted": SELECTs never see rows where it is true */
  softDeleteColumn?: string;
  /** boolean columns: comparing or setting them to 1/0 is refused with a hint (a common slip from SQLite) */
  booleanColumns?: readonly string[];
  /** UPDATE may not set these (the database grant says so too; this makes the error clear) */
  immutableColumns?: readonly string[];
}

export interface SqlPolicy {
  /** which statements are allowed at all */
  statements: readonly StatementKind[];
  /** relations that may be named (lower case, schema public or none); everything else is refused */
  tables: Readonly<Record<string, TablePolicy>>;
  /** a SELECT returns at most this many rows; a larger LIMIT is lowered to it */
  maxRows: number;
  /** an UPDATE that would change more rows than this is rolled back */
  maxUpdatedRows: number;
  /** the longest query text accepted, in characters */
  maxQueryLength: number;
  /** functions that may be called (lower-case names, schema pg_catalog or none) */
  functions: ReadonlySet<string>;
  /** types that casts may name */
  types: ReadonlySet<string>;
  /** what to say instead of a bare refusal, per refused statement */
  hints: { delete?: string; insert?: string };
}

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
    delete: "To delete a recipe, soft-delete it: UPDATE saved_recipes SET is_deleted = true WHERE id = '<id>' (restore it later with is_deleted = false)",
    insert: 'New recipes are saved with the save_recipe tool',
  },
};
