// What a save_recipe approval shows (PendingItem.preview, docs/api.md#approval-previews): the recipe read from
// the text the model will save, as a name, an ingredients list and steps, so a person approves a recipe and
// not a paragraph of raw text. Read with the deterministic parser the offline model saves with; a real model
// structures the text again in the save pipeline, so the saved recipe may word an item otherwise.
import type { ApprovalPreview } from '../../activities/tool-context.ts';
import { parseRecipeText } from './offline-save.ts';
import type { SaveRecipeArgs } from './tools.ts';

// within the preview's 4 KiB: a long recipe shows its beginning and says how many more there are
const MAX_INGREDIENTS = 25;
const MAX_STEPS = 12;
const MAX_TEXT = 100;

const short = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text);

const saveRecipe: ApprovalPreview = async (args: SaveRecipeArgs) => {
  const recipe = parseRecipeText(args.raw_recipe_data);
  const ingredients = recipe.ingredients.map((item) =>
    short([item.quantity, item.unit, item.name].filter(Boolean).join(' ') + (item.notes ? ` (${item.notes})` : '')),
  );
  return {
    recipe: {
      name: short(recipe.name),
      type: recipe.recipe_type,
      ingredients: ingredients.slice(0, MAX_INGREDIENTS),
      ...(ingredients.length > MAX_INGREDIENTS ? { moreIngredients: ingredients.length - MAX_INGREDIENTS } : {}),
      steps: recipe.instructions.slice(0, MAX_STEPS).map(short),
      ...(recipe.instructions.length > MAX_STEPS ? { moreSteps: recipe.instructions.length - MAX_STEPS } : {}),
      ...(recipe.prep_time !== null ? { prepMinutes: recipe.prep_time } : {}),
      ...(recipe.cook_time !== null ? { cookMinutes: recipe.cook_time } : {}),
      ...(recipe.servings !== null ? { servings: recipe.servings } : {}),
    },
  };
};

export const recipesPreviews: Readonly<Record<string, ApprovalPreview>> = { save_recipe: saveRecipe };
