// The recipe beside a sous conversation: version, ingredients, steps with todo/done (marked done from here),
// the defaults, and a note while a PatchSet waits for review.
import { useState } from 'react';
import { ApiError, api, newIdempotencyKey } from './api';
import type { ConversationView } from './types';

interface SousRecipe {
  title?: string;
  version?: number;
  servings?: number;
  ingredients?: { id: string; text: string }[];
  steps?: { id: string; text: string; status?: string }[];
  notes?: string[];
}

export function sousStateOf(view: ConversationView): { recipe?: SousRecipe; defaults?: Record<string, unknown>; pendingPatchSet?: unknown } {
  const state = (view.agentState ?? view.sous ?? view) as Record<string, unknown>;
  return { recipe: state.recipe as SousRecipe | undefined, defaults: state.defaults as Record<string, unknown> | undefined, pendingPatchSet: state.pendingPatchSet };
}

export function SousPanel({ view, onChanged }: { view: ConversationView; onChanged: () => void }) {
  const { recipe, defaults, pendingPatchSet } = sousStateOf(view);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<string>();
  if (!recipe) return <aside className="side-panel" aria-label="Recipe"><p className="muted">No recipe yet.</p></aside>;
  const markDone = async (stepId: string) => {
    setBusy(stepId);
    setError(undefined);
    try {
      await api('POST', `/v1/conversations/${view.id}/steps/${encodeURIComponent(stepId)}/done`, undefined, { idempotencyKey: newIdempotencyKey() });
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(undefined);
      onChanged();
    }
  };
  return (
    <aside className="side-panel" aria-label="Recipe">
      <h2>{recipe.title ?? 'Recipe'}</h2>
      <p className="muted">
        version {recipe.version ?? '?'}
        {recipe.servings ? ` · ${recipe.servings} servings` : ''}
      </p>
      {pendingPatchSet ? <p className="banner">A proposed change waits for your review (in the conversation).</p> : null}
      {error && <p role="alert" className="banner error">{error}</p>}
      <h3>Ingredients</h3>
      <ul className="ingredients">{recipe.ingredients?.map((i) => <li key={i.id}>{i.text}</li>)}</ul>
      <h3>Steps</h3>
      <ol className="steps">
        {recipe.steps?.map((s) => (
          <li key={s.id} className={s.status === 'done' ? 'done' : 'todo'} data-step-id={s.id}>
            <span className="step-text">{s.text}</span>{' '}
            {s.status === 'done' ? (
              <span className="chip done">done</span>
            ) : (
              <button type="button" className="secondary small" disabled={busy === s.id} onClick={() => markDone(s.id)} aria-label={`Mark step ${s.id} done: ${s.text}`}>
                Mark done
              </button>
            )}
          </li>
        ))}
      </ol>
      {recipe.notes && recipe.notes.length > 0 && (
        <>
          <h3>Notes</h3>
          <ul>{recipe.notes.map((n, i) => <li key={i}>{n}</li>)}</ul>
        </>
      )}
      {defaults && (
        <>
          <h3>Your defaults</h3>
          <dl className="facts">
            {Object.entries(defaults).map(([k, v]) => (
              <div key={k}><dt>{k}</dt><dd>{Array.isArray(v) ? v.join(', ') || '(none)' : String(v)}</dd></div>
            ))}
          </dl>
        </>
      )}
    </aside>
  );
}
