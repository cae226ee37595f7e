// The recipes agent: recipe cards in the chat, and My recipes, the saved ones to search and cook from.
import type { AgentHome } from '../../agentHome';
import { RecipeCard } from './RecipeCard';
import { RecipesPage } from './RecipesPage';

export const recipes: AgentHome = {
  label: 'Recipes',
  cards: { recipe_card: RecipeCard },
  pages: [{ path: '/recipes', navLabel: 'My recipes', Page: RecipesPage }],
};
