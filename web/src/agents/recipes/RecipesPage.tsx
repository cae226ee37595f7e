// My recipes: search by name or ingredient, filter by type, include soft-deleted ones; paginated.
import { useEffect, useState } from 'react';
import { ApiError, api, newIdempotencyKey } from '../../api';
import { navigate } from '../../router';
import { RecipeImage } from './RecipeImage';

interface SavedRecipe {
  id: string;
  name: string;
  recipe_type?: string;
  prep_time?: number | null;
  cook_time?: number | null;
  servings?: number | null;
  image_url?: string | null;
  is_deleted?: boolean;
  ingredients?: { name?: string; quantity?: unknown; unit?: string }[];
  instructions?: string[];
  created_at?: string;
  [key: string]: unknown;
}

interface RecipePage {
  recipes: SavedRecipe[];
  next?: string | null;
  nextCursor?: string | null;
  cursor?: string | null;
}

export function RecipesPage() {
  const [q, setQ] = useState('');
  const [type, setType] = useState('');
  const [deleted, setDeleted] = useState(false);
  const [recipes, setRecipes] = useState<SavedRecipe[]>();
  const [next, setNext] = useState<string | null>();
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState<string | null>(() => new URLSearchParams(window.location.search).get('id'));

  const query = (cursor?: string) => {
    const params = new URLSearchParams();
    if (q.trim()) params.set('q', q.trim());
    if (type) params.set('type', type);
    if (deleted) params.set('deleted', 'true');
    if (cursor) params.set('cursor', cursor);
    return `/v1/recipes${params.size ? `?${params}` : ''}`;
  };

  const load = async (cursor?: string) => {
    setError(undefined);
    try {
      const page = await api<RecipePage>('GET', query(cursor));
      setRecipes((current) => (cursor ? [...(current ?? []), ...page.recipes] : page.recipes));
      setNext(page.nextCursor ?? page.next ?? page.cursor ?? null);
    } catch (e) {
      const err = e as ApiError;
      setError(err.status === 404 ? 'Saved recipes are not available on this server (no recipes agent).' : err.message);
      setRecipes((current) => current ?? []);
    }
  };

  useEffect(() => {
    const timer = setTimeout(() => load(), 250);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [q, type, deleted]);

  return (
    <section className="recipes-page" aria-labelledby="recipes-title">
      <h1 id="recipes-title">My recipes</h1>
      <form
        className="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          load();
        }}
      >
        <div className="field">
          <label htmlFor="recipe-q">Search by name or ingredient</label>
          <input id="recipe-q" type="search" value={q} onChange={(e) => setQ(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="recipe-type">Type</label>
          <select id="recipe-type" value={type} onChange={(e) => setType(e.target.value)}>
            <option value="">All</option>
            <option value="food">Food</option>
            <option value="dessert">Dessert</option>
            <option value="cocktail">Cocktail</option>
          </select>
        </div>
        <label className="checkbox">
          <input type="checkbox" checked={deleted} onChange={(e) => setDeleted(e.target.checked)} /> Show deleted recipes
        </label>
      </form>
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      {!recipes ? (
        <p className="muted">Loading…</p>
      ) : recipes.length === 0 ? (
        <p className="muted">No recipes match.</p>
      ) : (
        <ul className="recipe-grid">
          {recipes.map((r) => (
            <li key={r.id} className={`card recipe-card ${r.is_deleted ? 'deleted' : ''}`}>
              <RecipeImage src={r.image_url} alt={`Photo of ${r.name}`} />
              <div className="card-body">
                <h2>{r.name}</h2>
                <p className="muted">
                  {[
                    r.recipe_type,
                    r.prep_time != null ? `${r.prep_time} min prep` : '',
                    r.servings ? `${r.servings} ${r.servings === 1 ? 'serving' : 'servings'}` : '',
                    r.is_deleted ? 'deleted' : '',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </p>
                {!r.is_deleted && (
                  <button
                    type="button"
                    className="secondary small"
                    onClick={async () => {
                      try {
                        const created = await api<{ id: string }>(
                          'POST',
                          '/v1/conversations',
                          { agent: 'sous', recipeId: r.id, title: r.name },
                          { idempotencyKey: newIdempotencyKey() },
                        );
                        navigate(`/c/${created.id}`);
                      } catch (e) {
                        setError((e as ApiError).message);
                      }
                    }}
                  >
                    Cook it with Sous
                  </button>
                )}{' '}
                <button type="button" className="link" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? null : r.id)}>
                  {open === r.id ? 'Hide' : 'Show'} ingredients and steps
                </button>
                {open === r.id && (
                  <div className="recipe-detail">
                    <h3>Ingredients</h3>
                    <ul>
                      {(r.ingredients ?? []).map((i, n) => (
                        <li key={n}>
                          {[i.quantity, i.unit, i.name]
                            .filter((x) => x !== undefined && x !== null && x !== '')
                            .map(String)
                            .join(' ')}
                        </li>
                      ))}
                    </ul>
                    <h3>Steps</h3>
                    <ol>
                      {(r.instructions ?? []).map((s, n) => (
                        <li key={n}>{String(s)}</li>
                      ))}
                    </ol>
                  </div>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
      {next && (
        <button type="button" className="secondary" onClick={() => load(next)}>
          More
        </button>
      )}
    </section>
  );
}
