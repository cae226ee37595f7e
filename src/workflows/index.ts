export { chatSession } from './chat-session.ts';
export { saveRecipe } from '../agents/recipes/save-recipe-workflow.ts';
export { breweryRecommendation } from '../agents/beer/brewery-recommendation.ts';
