// A recipe the agent found or saved, with its actions and a link to it in My recipes.
import type { Card } from '../../agentHome';
import { compose } from '../../compose';
import { RecipeImage } from './RecipeImage';

export function RecipeCard({ card }: { card: Card }) {
  const name = String(card.recipe_name ?? card.name ?? 'Recipe');
  const actions = Array.isArray(card.actions) ? (card.actions as unknown[]) : [];
  return (
    <article className="card recipe-card" aria-label={`Recipe: ${name}`}>
      <RecipeImage src={typeof card.image_url === 'string' ? card.image_url : undefined} alt={`Photo of ${name}`} />
      <div className="card-body">
        <h3>{name}</h3>
        <dl className="facts">
          {card.recipe_type != null && (
            <>
              <dt>Type</dt>
              <dd>{String(card.recipe_type)}</dd>
            </>
          )}
          {card.prep_time != null && (
            <>
              <dt>Prep time</dt>
              <dd>{typeof card.prep_time === 'number' ? `${card.prep_time} min` : String(card.prep_time)}</dd>
            </>
          )}
          {card.servings != null && (
            <>
              <dt>Servings</dt>
              <dd>{String(card.servings)}</dd>
            </>
          )}
          {card.status != null && (
            <>
              <dt>Status</dt>
              <dd>{String(card.status)}</dd>
            </>
          )}
        </dl>
        {actions.length > 0 && (
          <div className="actions">
            {actions.map((action, i) => {
              const a = (typeof action === 'object' && action ? action : { name: String(action) }) as Card;
              const verb = String(a.label ?? a.name ?? a.type ?? 'open');
              // An action is a request to the agent, written into the message box for the person to send. It
              // names the recipe by id too: a name can match several recipes, and the offline model reads ids.
              const id = card.recipe_id != null ? ` (id ${String(card.recipe_id)})` : '';
              const text = `${verb[0]!.toUpperCase()}${verb.slice(1)} my recipe "${name}"${id}${/modify|edit|change/i.test(verb) ? ': ' : ''}`;
              return (
                <button key={i} type="button" className="secondary small" onClick={() => compose(text)}>
                  {verb[0]!.toUpperCase()}
                  {verb.slice(1)}
                </button>
              );
            })}
            {card.recipe_id != null && (
              <a className="button secondary small" href={`/recipes?id=${encodeURIComponent(String(card.recipe_id))}`}>
                In My recipes
              </a>
            )}
          </div>
        )}
      </div>
    </article>
  );
}
