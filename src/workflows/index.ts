export { chatSession } from './chat-session.ts';
export { saveRecipe } from './save-recipe.ts';
export { breweryRecommendation } from './brewery-recommendation.ts';
