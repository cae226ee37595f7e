// A saved recipe as the structuring step produces it, the database stores it (src/agents/recipes/migrations/005_recipes.sql)
// and the API returns it, and the recipe card the client renders. Plain zod so workflow code can import it.
import { z } from 'zod';
import { SAVED_RECIPE_COLUMNS as COLUMNS } from './columns.ts';

export const RECIPE_TYPES = ['cocktail', 'food', 'dessert'] as const;
export const RecipeType = z.enum(RECIPE_TYPES);
export type RecipeType = z.infer<typeof RecipeType>;

const minutes = z.number().int().min(0).max(100_000);

export const Ingredient = z.object({
  name: z.string().trim().min(1).max(200),
  /** as written: "2", "1/2", "a pinch" */
  quantity: z.string().max(100).nullish(),
  unit: z.string().max(50).nullish(),
  notes: z.string().max(500).nullish(),
});
export type Ingredient = z.infer<typeof Ingredient>;

/** What the structuring step makes of a raw recipe: everything a user could have said about it. */
export const RecipeContent = z.object({
  name: z.string().trim().min(1).max(200),
  recipe_type: RecipeType,
  ingredients: z.array(Ingredient).max(200),
  instructions: z.array(z.string().trim().min(1).max(2000)).max(200),
  /** minutes */
  prep_time: minutes.nullish(),
  /** minutes */
  cook_time: minutes.nullish(),
  servings: z.number().int().positive().max(10_000).nullish(),
  /** URLs the recipe came from */
  source_references: z.array(z.string().max(2000)).max(50).default([]),
  notes: z.string().max(10_000).nullish(),
  tags: z.array(z.string().trim().min(1).max(50)).max(50).default([]),
});
export type RecipeContent = z.infer<typeof RecipeContent>;

/** A row of saved_recipes, as the API returns it. */
export const SavedRecipe = RecipeContent.extend({
  id: z.uuid(),
  user_id: z.string(),
  user_notes: z.string().nullable(),
  image_url: z.string().max(500).nullable(),
  is_deleted: z.boolean(),
  conversation_id: z.uuid().nullable(),
  /** ISO 8601 */
  created_at: z.string(),
  /** ISO 8601 */
  last_accessed_at: z.string(),
});
export type SavedRecipe = z.infer<typeof SavedRecipe>;

/** The columns of saved_recipes (columns.ts), each a field of SavedRecipe. */
export const SAVED_RECIPE_COLUMNS = COLUMNS satisfies readonly (keyof SavedRecipe)[];

export const RecipeCardStatus = z.enum(['saved', 'pending', 'deleted']);
export type RecipeCardStatus = z.infer<typeof RecipeCardStatus>;

/** RecipeCardMessage: a card the client renders after save_recipe. */
export const RecipeCardMessage = z.object({
  type: z.literal('recipe_card').default('recipe_card'),
  recipe_id: z.string(),
  recipe_name: z.string(),
  recipe_type: RecipeType,
  /** minutes */
  prep_time: z.number().int().nullable().default(null),
  servings: z.number().int().nullable().default(null),
  image_url: z.string().nullable().default(null),
  status: RecipeCardStatus.default('saved'),
  actions: z.array(z.string()).default(['delete', 'modify']),
});
export type RecipeCardMessage = z.infer<typeof RecipeCardMessage>;
