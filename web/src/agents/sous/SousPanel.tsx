// The recipe beside a sous conversation: version, ingredients, steps with todo/done (marked done from here),
// the defaults, a note while a PatchSet waits for review, and, once changes are accepted, saving this
// version to My recipes.
import { useState } from 'react';
import { ApiError, api, newIdempotencyKey } from '../../api';
import type { SidePanelProps } from '../../agentHome';
import { navigate } from '../../router';
import { sousViewOf } from './sousView';

interface SavedVersion {
  recipeId: string;
  name: string;
  version: number;
  created: boolean;
}

export function SousPanel({ view, onChanged }: SidePanelProps) {
  const { recipe, defaults, pendingPatchSet, hardAvoidOverrides = [], acceptedChanges } = sousViewOf(view);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const [saved, setSaved] = useState<SavedVersion>();
  if (!recipe)
    return (
      <aside className="side-panel" aria-label="Recipe">
        <p className="muted">No recipe yet.</p>
      </aside>
    );
  const markDone = async (stepId: string) => {
    setBusy(stepId);
    setError(undefined);
    try {
      await api('POST', `/v1/conversations/${view.id}/steps/${encodeURIComponent(stepId)}/done`, undefined, {
        idempotencyKey: newIdempotencyKey(),
      });
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(undefined);
      onChanged();
    }
  };
  const allow = async (hardAvoid: string) => {
    setBusy(`avoid:${hardAvoid}`);
    setError(undefined);
    try {
      await api('POST', `/v1/conversations/${view.id}/overrides`, { hardAvoid }, { idempotencyKey: newIdempotencyKey() });
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(undefined);
      onChanged();
    }
  };
  const save = async () => {
    setBusy('save');
    setError(undefined);
    try {
      setSaved(await api<SavedVersion>('POST', `/v1/conversations/${view.id}/recipe/save`, {}));
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(undefined);
    }
  };
  const pendingId = (pendingPatchSet as { pendingId?: string } | null | undefined)?.pendingId;
  const avoids = Array.isArray(defaults?.hardAvoids) ? (defaults.hardAvoids as string[]) : [];
  const portions = typeof defaults?.portions === 'number' ? defaults.portions : undefined;
  return (
    <aside className="side-panel" aria-label="Recipe">
      <h2>{recipe.title ?? 'Recipe'}</h2>
      <p className="muted">
        version {recipe.version ?? '?'}
        {recipe.servings ? ` · ${recipe.servings} ${recipe.servings === 1 ? 'serving' : 'servings'}` : ''}
      </p>
      {pendingPatchSet ? (
        <p className="banner">
          A proposed change waits for your review (in the conversation).{' '}
          {pendingId && (
            <button
              type="button"
              className="link"
              onClick={() => document.getElementById(`patch-${pendingId}`)?.scrollIntoView({ block: 'start' })}
            >
              Go to the review
            </button>
          )}
        </p>
      ) : null}
      {acceptedChanges > 0 && (
        <div className="save-version">
          {saved?.version !== recipe.version && (
            <button type="button" className="secondary small" disabled={busy === 'save'} onClick={save}>
              {busy === 'save' ? 'Saving…' : 'Save this version to My recipes'}
            </button>
          )}
          {saved && (
            <p role="status" className="banner">
              {saved.created ? 'Saved' : 'Already saved'} version {saved.version} to My recipes as “{saved.name}”, a new recipe; the recipe
              you started from is unchanged.{' '}
              <a
                href={`/recipes?id=${encodeURIComponent(saved.recipeId)}`}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(`/recipes?id=${encodeURIComponent(saved.recipeId)}`);
                }}
              >
                Open “{saved.name}” in My recipes
              </a>
            </p>
          )}
        </div>
      )}
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      <h3>Ingredients</h3>
      <ul className="ingredients">
        {recipe.ingredients?.map((i) => (
          <li key={i.id}>{i.text}</li>
        ))}
      </ul>
      <h3>Steps</h3>
      <ol className="steps">
        {recipe.steps?.map((s) => (
          <li key={s.id} className={s.status === 'done' ? 'done' : 'todo'} data-step-id={s.id}>
            <span className="step-text">{s.text}</span>{' '}
            {s.status === 'done' ? (
              <span className="chip done">done</span>
            ) : (
              <button
                type="button"
                className="secondary small"
                disabled={busy === s.id}
                onClick={() => markDone(s.id)}
                aria-label={`Mark step ${s.id} done: ${s.text}`}
              >
                Mark done
              </button>
            )}
          </li>
        ))}
      </ol>
      {recipe.notes && recipe.notes.length > 0 && (
        <>
          <h3>Notes</h3>
          <ul>
            {recipe.notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        </>
      )}
      {defaults && (
        <section aria-labelledby="sous-defaults">
          <h3 id="sous-defaults">Your defaults</h3>
          {portions !== undefined && <p>Portions: {portions}</p>}
          <p>{avoids.length ? 'Never use:' : 'Nothing you never use.'}</p>
          {avoids.length > 0 && (
            <ul className="avoids">
              {avoids.map((avoid) => {
                const lifted = hardAvoidOverrides.includes(avoid);
                return (
                  <li key={avoid}>
                    <span>{avoid}</span>{' '}
                    {lifted ? (
                      <span className="chip">allowed for this recipe</span>
                    ) : (
                      <button type="button" className="secondary small" disabled={busy === `avoid:${avoid}`} onClick={() => allow(avoid)}>
                        Allow {avoid} for this recipe
                      </button>
                    )}
                  </li>
                );
              })}
            </ul>
          )}
        </section>
      )}
    </aside>
  );
}
