// What the recipes agent lets other agents do with saved recipes (My recipes): read one, and save a new one
// beside it. The only module of this agent another agent may import (the dependency rules allow public.ts
// and nothing else), so saved_recipes keeps one owner: a change to its columns is made here, not in sous.
// Every call runs as the user under row-level security, on the caller's transaction (asUser).
import type pg from 'pg';
import { insertSavedRecipe } from './saved-recipes-table.ts';

/** An ingredient as saved ({name, quantity, unit, notes}). */
export interface SavedIngredient {
  name: string;
  quantity: string | null;
  unit: string | null;
  notes: string | null;
}

/** A saved recipe's fields, as another agent reads and writes them. */
export interface SavedRecipeFields {
  name: string;
  recipe_type: string;
  ingredients: SavedIngredient[];
  instructions: string[];
  prep_time: number | null;
  cook_time: number | null;
  servings: number | null;
  source_references: unknown[];
  notes: string | null;
  tags: unknown[];
}

/** A saved recipe as read: its fields, loosely typed as stored, and whether the user deleted it. */
export type StoredRecipe = Omit<SavedRecipeFields, 'ingredients'> & { ingredients: Partial<SavedIngredient>[]; is_deleted: boolean };

type Queryable = Pick<pg.PoolClient, 'query'>;

/** The user's saved recipe with this id (row-level security hides everyone else's), deleted or not. */
export async function findSavedRecipe(db: Queryable, id: string): Promise<StoredRecipe | undefined> {
  const { rows } = await db.query<StoredRecipe>(
    `SELECT name, recipe_type, ingredients, instructions, prep_time, cook_time, servings, source_references, notes, tags, is_deleted
       FROM saved_recipes WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/**
 * Saves a recipe under `id` unless that id is taken: `created`, or what holds the id already (`live`, or
 * `deleted` by the user since). The caller picks ids (sous hashes the content, so a retried save is one recipe).
 */
export async function saveRecipeAs(
  db: Queryable,
  { id, userId, conversationId, recipe }: { id: string; userId: string; conversationId: string; recipe: SavedRecipeFields },
): Promise<'created' | 'live' | 'deleted'> {
  if (await insertSavedRecipe(db, { id, userId, conversationId, recipe })) return 'created';
  // a concurrent save of the same id committed first (ON CONFLICT waited for it): that row answers
  const { rows } = await db.query<{ is_deleted: boolean }>('SELECT is_deleted FROM saved_recipes WHERE id = $1', [id]);
  return rows[0] && !rows[0].is_deleted ? 'live' : 'deleted';
}
