// Where a sous conversation starts: one of the person's saved recipes, chosen by name (or the demo recipe),
// and the defaults (hard avoids, portions).
import { useEffect, useState } from 'react';
import type { AgentStart } from '../../agentHome';
import { api } from '../../api';

interface SavedRecipe {
  id: string;
  name: string;
  recipe_type?: string;
}

/** The newest hundred of My recipes (GET /v1/recipes), or why they could not be listed. */
function useSavedRecipes(): { recipes?: SavedRecipe[]; error?: string } {
  const [state, setState] = useState<{ recipes?: SavedRecipe[]; error?: string }>({});
  useEffect(() => {
    let live = true;
    api<{ recipes: SavedRecipe[] }>('GET', '/v1/recipes?limit=100')
      .then((list) => live && setState({ recipes: list.recipes }))
      .catch((error: Error) => live && setState({ error: error.message }));
    return () => {
      live = false;
    };
  }, []);
  return state;
}

function SousStartFields({ values, onChange }: { values: Record<string, string>; onChange: (values: Record<string, string>) => void }) {
  const set = (name: string, value: string) => onChange({ ...values, [name]: value });
  const { recipes, error } = useSavedRecipes();
  return (
    <fieldset className="sous-start">
      <legend>Recipe to cook</legend>
      {error ? (
        // the list is a convenience: without it, an id from My recipes still starts the conversation
        <>
          <p className="muted">
            My recipes could not be listed ({error}); type a saved recipe's id, or leave it empty for the demo recipe.
          </p>
          <label htmlFor="new-recipe-id">Saved recipe id</label>
          <input id="new-recipe-id" value={values.recipeId ?? ''} onChange={(e) => set('recipeId', e.target.value)} />
        </>
      ) : (
        <>
          <label htmlFor="new-recipe-id">Recipe</label>
          <select id="new-recipe-id" value={values.recipeId ?? ''} onChange={(e) => set('recipeId', e.target.value)} disabled={!recipes}>
            <option value="">The demo recipe (lemon garlic spaghetti)</option>
            {(recipes ?? []).map((recipe) => (
              <option key={recipe.id} value={recipe.id}>
                {recipe.name}
                {recipe.recipe_type ? ` (${recipe.recipe_type})` : ''}
              </option>
            ))}
          </select>
          {recipes && recipes.length === 0 && (
            <p className="muted">No saved recipes yet: save one with the recipes agent to cook it here.</p>
          )}
        </>
      )}
      <label htmlFor="new-avoids">Never use (comma separated)</label>
      <input
        id="new-avoids"
        value={values.hardAvoids ?? ''}
        placeholder="peanut, shellfish"
        onChange={(e) => set('hardAvoids', e.target.value)}
      />
      <label htmlFor="new-portions">Portions</label>
      <input
        id="new-portions"
        type="number"
        min={1}
        max={1000}
        value={values.portions ?? ''}
        onChange={(e) => set('portions', e.target.value)}
      />
    </fieldset>
  );
}

function sousStartBody({ recipeId = '', hardAvoids = '', portions = '' }: Record<string, string>): Record<string, unknown> {
  const avoids = hardAvoids
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const defaults = { ...(avoids.length ? { hardAvoids: avoids } : {}), ...(Number(portions) > 0 ? { portions: Number(portions) } : {}) };
  return { ...(recipeId.trim() ? { recipeId: recipeId.trim() } : {}), ...(Object.keys(defaults).length ? { defaults } : {}) };
}

export const sousStart: AgentStart = { Fields: SousStartFields, body: sousStartBody };
