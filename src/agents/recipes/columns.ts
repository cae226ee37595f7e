// The columns of saved_recipes, in table order: one list for every SELECT that returns whole recipes, and for the
// web client, which lays out rows of these alone as recipe cards. No imports, so the web bundle can take it.
export const SAVED_RECIPE_COLUMNS = [
  'id',
  'user_id',
  'name',
  'recipe_type',
  'ingredients',
  'instructions',
  'prep_time',
  'cook_time',
  'servings',
  'source_references',
  'notes',
  'user_notes',
  'image_url',
  'tags',
  'is_deleted',
  'conversation_id',
  'created_at',
  'last_accessed_at',
] as const;
