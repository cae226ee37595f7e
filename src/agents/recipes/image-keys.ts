// Where a recipe's image lives in the object store, made from the recipe id (a uuid the save workflow makes).
import { checkKey } from '../../storage/object-store.ts';

export const RECIPE_IMAGES = 'recipes';
export const RECIPE_IMAGE_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png$/;

/** The final key of a recipe's image. */
export const recipeImageKey = (recipeId: string) => checkKey(`${RECIPE_IMAGES}/${recipeId}.png`);
/** Where the image step leaves the generated image for the upload step (any worker can read it). */
export const stagedImageKey = (recipeId: string) => checkKey(`staging/${RECIPE_IMAGES}/${recipeId}.png`);
