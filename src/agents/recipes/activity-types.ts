// The save pipeline's activity signatures, imported as types by the saveRecipe workflow (no code crosses).
import type { RecipeContent } from './recipe.ts';

/** Who the pipeline's model calls are charged to (absent only in inputs scheduled before issue 29). */
export interface ChargedTo {
  userId?: string;
  conversationId?: string;
}

export interface StructureInput extends ChargedTo {
  recipeId: string;
  raw: string;
}

/** A recipe that did not fit its schema after the allowed attempts is an outcome, not a failure: nothing is stored. */
export type StructureOutcome = { ok: true; recipe: RecipeContent } | { ok: false; error: string };

export interface ImagePromptInput extends ChargedTo {
  recipeId: string;
  recipe: RecipeContent;
}

export interface ImageInput extends ChargedTo {
  recipeId: string;
  prompt: string;
}

export interface StagedImage {
  /** where the upload step finds it */
  key: string;
  bytes: number;
  mimeType: string;
  model: string;
}

export interface UploadInput {
  recipeId: string;
  mimeType: string;
}

export interface InsertInput {
  recipeId: string;
  userId: string;
  conversationId: string;
  recipe: RecipeContent;
  imageUrl: string | null;
}

export interface RecipeActivities {
  /** step 1: raw text to a recipe that fits RecipeContent (response schema, checked, asked again) */
  structureRecipe(input: StructureInput): Promise<StructureOutcome>;
  /** step 2: the image prompt */
  writeImagePrompt(input: ImagePromptInput): Promise<string>;
  /** step 3: the image, staged in the object store (images are too big for workflow history) */
  generateRecipeImage(input: ImageInput): Promise<StagedImage>;
  /** step 4: recipes/<id>.png from the staged image; answers the public URL */
  uploadRecipeImage(input: UploadInput): Promise<{ key: string; url: string }>;
  /** step 5: INSERT ... ON CONFLICT (id) DO NOTHING; `inserted` is false when a retry found its own row */
  insertRecipe(input: InsertInput): Promise<{ inserted: boolean }>;
}
