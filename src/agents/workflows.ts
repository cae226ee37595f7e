// The agents' child workflows, for the workflow bundle's entry (src/workflows/index.ts). The exported
// names are the workflow types in recorded histories: never rename one.
export { saveRecipe } from './recipes/save-recipe-workflow.ts';
export { breweryRecommendation } from './beer/brewery-recommendation.ts';
