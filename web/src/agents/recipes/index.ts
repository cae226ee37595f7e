// The recipes agent: recipes saved and found.
import type { AgentHome } from '../../agentHome';
import { RecipeCard } from './RecipeCard';

export const recipes: AgentHome = {
  label: 'Recipes',
  cards: { recipe_card: RecipeCard },
};
