// Where a sous conversation starts: a saved recipe by id, and the defaults (hard avoids, portions).
import type { AgentStart } from '../../agentHome';

function SousStartFields({ values, onChange }: { values: Record<string, string>; onChange: (values: Record<string, string>) => void }) {
  const set = (name: string, value: string) => onChange({ ...values, [name]: value });
  return (
    <fieldset className="sous-start">
      <legend>Recipe to cook (the demo recipe when empty)</legend>
      <label htmlFor="new-recipe-id">Saved recipe id (from My recipes)</label>
      <input id="new-recipe-id" value={values.recipeId ?? ''} onChange={(e) => set('recipeId', e.target.value)} />
      <label htmlFor="new-avoids">Never use (comma separated)</label>
      <input id="new-avoids" value={values.hardAvoids ?? ''} placeholder="peanut, shellfish" onChange={(e) => set('hardAvoids', e.target.value)} />
      <label htmlFor="new-portions">Portions</label>
      <input id="new-portions" type="number" min={1} max={1000} value={values.portions ?? ''} onChange={(e) => set('portions', e.target.value)} />
    </fieldset>
  );
}

function sousStartBody({ recipeId = '', hardAvoids = '', portions = '' }: Record<string, string>): Record<string, unknown> {
  const avoids = hardAvoids.split(',').map((a) => a.trim()).filter(Boolean);
  const defaults = { ...(avoids.length ? { hardAvoids: avoids } : {}), ...(Number(portions) > 0 ? { portions: Number(portions) } : {}) };
  return { ...(recipeId.trim() ? { recipeId: recipeId.trim() } : {}), ...(Object.keys(defaults).length ? { defaults } : {}) };
}

export const sousStart: AgentStart = { Fields: SousStartFields, body: sousStartBody };
