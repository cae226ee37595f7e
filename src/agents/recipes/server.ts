// The recipes agent in the server processes: its SQL tool, the save pipeline's activities, GET /v1/recipes,
// and its images for <img> tags.
import { defineAgentServer } from '../../api/agent-server.ts';
import { recipesAgent } from './spec.ts';
import { createRecipeActivities } from './activities.ts';
import { recipesImplementations } from './implementations.ts';
import { recipesOffline } from './offline-chat.ts';
import { savedRecipesData } from './personal-data.ts';
import { recipeImageFiles, recipeImagePaths } from './public-images.ts';
import { RecipeCardMessage, SavedRecipe } from './recipe.ts';
import { RecipeList, recipePaths, recipeRoutes } from './routes.ts';
import { SaveProgress, SaveRecipeResult } from './save-pipeline.ts';
import { recipesPreviews } from './save-preview.ts';

export const recipesServer = defineAgentServer({
  name: 'recipes',
  spec: recipesAgent,
  bundle: {
    spec: new URL('./spec.ts', import.meta.url),
    specExport: 'recipesAgent',
    workflows: new URL('./workflows.ts', import.meta.url),
  },
  migrations: new URL('./migrations/', import.meta.url),
  implementations: recipesImplementations,
  previews: recipesPreviews,
  activities: (services) => createRecipeActivities(services),
  routes: ({ pool, config }) => recipeRoutes({ pool, config }),
  publicFiles: recipeImageFiles,
  personalData: [savedRecipesData],
  offline: recipesOffline,
  openapi: {
    schemas: {
      Recipe: SavedRecipe,
      RecipeList,
      // What a save_recipe turn carries: the tool message's result and card, and the progress events' data.
      SaveRecipeResult,
      RecipeCard: RecipeCardMessage,
      SaveProgress,
    },
    paths: (helpers) => ({ ...recipePaths(helpers), ...recipeImagePaths(helpers) }),
  },
});
