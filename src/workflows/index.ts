export { chatSession } from './chat-session.ts';
export { saveRecipe } from './save-recipe.ts';
