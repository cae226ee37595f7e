// The recipes agent: recipe cards in the chat, and My recipes, the saved ones to search and cook from.
import type { AgentHome } from '../../agentHome';
import { RecipeCard } from './RecipeCard';
import { RecipesPage } from './RecipesPage';
import { saveApproval, saveApproved } from './approvals';
import { recipeSqlView, rowsAreRecipes } from './views';

/** "Old Fashioned cocktail. Ingredients: …" → "Old Fashioned cocktail" */
const recipeName = (raw: string): string => {
  const name = raw.split(/[.:\n]/)[0]!.trim();
  return name.length > 60 ? `${name.slice(0, 59)}…` : name || 'recipe';
};

/** What a query of execute_recipe_sql does, in the words a person uses (the soft delete is an UPDATE). */
function sqlAction(args: Record<string, unknown>): 'delete' | 'restore' | 'change' | 'look' {
  const query = typeof args.query === 'string' ? args.query : '';
  if (!/^\s*update\b/i.test(query)) return 'look';
  if (/\bis_deleted\s*=\s*true\b/i.test(query)) return 'delete';
  if (/\bis_deleted\s*=\s*false\b/i.test(query)) return 'restore';
  return 'change';
}

export const recipes: AgentHome = {
  label: 'Recipes',
  description: 'Saves recipes you paste, with a picture, and finds them again in My recipes.',
  firstPrompt: 'list my recipes',
  cards: { recipe_card: RecipeCard },
  examples: [
    'list my recipes',
    'find recipes with bourbon',
    'save this recipe: Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. Prep time: 5 minutes. Serves: 1. Type: cocktail.',
  ],
  tools: {
    save_recipe: {
      call: (a) => `Save the recipe “${recipeName(String(a.raw_recipe_data ?? ''))}” to My recipes`,
      result: (r: Record<string, unknown>) =>
        r.status === 'saved' ? `Saved “${String(r.recipe_name ?? 'the recipe')}” to My recipes.` : undefined,
      approval: saveApproval,
      approved: saveApproved,
      // the recipe card under the sentence shows the saved recipe
      view: (r: Record<string, unknown>) => (r.status === 'saved' ? null : undefined),
    },
    execute_recipe_sql: {
      call: (a) =>
        ({
          delete: 'Delete a recipe from My recipes',
          restore: 'Restore a deleted recipe to My recipes',
          change: 'Change a recipe in My recipes',
          look: 'Look in My recipes',
        })[sqlAction(a)],
      result: (r: Record<string, unknown>, a) => {
        if (Array.isArray(r.rows)) {
          const n = r.rows.length;
          // a computed table (counts, averages) is rows, not recipes
          if (n > 0 && !rowsAreRecipes(r.rows)) return n === 1 ? 'The query found 1 row.' : `The query found ${n} rows.`;
          return n === 0 ? 'Found no recipes.' : n === 1 ? 'Found 1 recipe.' : `Found ${n} recipes.`;
        }
        const action = sqlAction(a);
        if (r.rows_affected === 1 && action === 'delete') return 'Deleted the recipe from My recipes (it can be restored).';
        if (r.rows_affected === 1 && action === 'restore') return 'Restored the recipe to My recipes.';
        if (r.rows_affected === 1 && action === 'change') return 'Changed the recipe in My recipes.';
        return typeof r.message === 'string' ? r.message : undefined;
      },
      view: recipeSqlView,
    },
  },
  pages: [{ path: '/recipes', navLabel: 'My recipes', Page: RecipesPage }],
};
