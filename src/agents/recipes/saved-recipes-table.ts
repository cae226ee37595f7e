// The one INSERT into saved_recipes: the save pipeline's last step (with the recipe's image) and another
// agent's save through public.ts (without) write the same columns the same way.
import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** What a row is written from: the recipe's own fields, optional ones absent or null. */
export interface RecipeRow {
  name: string;
  recipe_type: string;
  ingredients: unknown[];
  instructions: string[];
  prep_time?: number | null;
  cook_time?: number | null;
  servings?: number | null;
  source_references?: unknown[];
  notes?: string | null;
  tags?: unknown[];
}

/** Inserts the recipe under `id` unless the id is taken (a retry, a concurrent save): true when this call wrote it. */
export async function insertSavedRecipe(
  db: Queryable,
  {
    id,
    userId,
    conversationId,
    recipe,
    imageUrl,
  }: { id: string; userId: string; conversationId: string; recipe: RecipeRow; imageUrl?: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, cook_time,
                                servings, source_references, notes, tags, image_url, conversation_id)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10::jsonb, $11, $12::jsonb, $13, $14)
     ON CONFLICT (id) DO NOTHING`,
    [
      id,
      userId,
      recipe.name,
      recipe.recipe_type,
      JSON.stringify(recipe.ingredients),
      JSON.stringify(recipe.instructions),
      recipe.prep_time ?? null,
      recipe.cook_time ?? null,
      recipe.servings ?? null,
      JSON.stringify(recipe.source_references ?? []),
      recipe.notes ?? null,
      JSON.stringify(recipe.tags ?? []),
      imageUrl ?? null,
      conversationId,
    ],
  );
  return rowCount === 1;
}
