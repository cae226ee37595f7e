// Generative UI the agents attach to messages: recipe cards, brewery cards, and a summary's cache state.
import { useState } from 'react';

type Card = Record<string, unknown>;

export function Cards({ cards }: { cards: Card[] }) {
  return (
    <div className="cards">
      {cards.map((card, i) =>
        card.type === 'recipe_card' ? (
          <RecipeCard key={i} card={card} />
        ) : card.type === 'breweries' ? (
          <BreweryCards key={i} breweries={(card.breweries as Card[]) ?? []} />
        ) : card.type === 'brewery_summary' ? (
          <BrewerySummary key={i} card={card} />
        ) : (
          <details key={i} className="card unknown">
            <summary>{String(card.type ?? 'card')}</summary>
            <pre>{JSON.stringify(card, null, 2)}</pre>
          </details>
        ),
      )}
    </div>
  );
}

// A recipe image's address as the app makes it: /files/recipes/<uuid>.png on the API (the local store),
// or an object recipes/<uuid>.png in the image bucket (its public URL, or an emulator's download URL).
const LOCAL_IMAGE = /^\/files\/recipes\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png$/;
const BUCKET_IMAGE = /recipes(\/|%2F)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png(\?alt=media)?$/;

/** The URL to show, or undefined for an address the app did not produce (decided on the parsed URL). */
export function recipeImageUrl(src: string): string | undefined {
  let url: URL;
  try {
    url = new URL(src, window.location.href);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return undefined;
  const local = url.pathname.match(LOCAL_IMAGE) && !url.search && !url.hash;
  const bucket = BUCKET_IMAGE.test(url.pathname + url.search) && !url.hash;
  return local || bucket ? url.href : undefined;
}

/**
 * A recipe's image. Images need no bearer token (their names are unguessable), so none is ever sent with
 * one; an address the app did not produce, or an image that fails to load, shows as "no image".
 */
export function RecipeImage({ src, alt }: { src: string | null | undefined; alt: string }) {
  const [failed, setFailed] = useState(false);
  const url = src ? recipeImageUrl(src) : undefined;
  if (!url || failed) return <div className="img-missing" role="img" aria-label={`${alt} (no image)`}>no image</div>;
  return <img src={url} alt={alt} loading="lazy" referrerPolicy="no-referrer" onError={() => setFailed(true)} />;
}

export function RecipeCard({ card }: { card: Card }) {
  const name = String(card.recipe_name ?? card.name ?? 'Recipe');
  const actions = Array.isArray(card.actions) ? (card.actions as unknown[]) : [];
  return (
    <article className="card recipe-card" aria-label={`Recipe: ${name}`}>
      <RecipeImage src={typeof card.image_url === 'string' ? card.image_url : undefined} alt={`Photo of ${name}`} />
      <div className="card-body">
        <h3>{name}</h3>
        <dl className="facts">
          {card.recipe_type != null && (<><dt>Type</dt><dd>{String(card.recipe_type)}</dd></>)}
          {card.prep_time != null && (<><dt>Prep time</dt><dd>{typeof card.prep_time === 'number' ? `${card.prep_time} min` : String(card.prep_time)}</dd></>)}
          {card.servings != null && (<><dt>Servings</dt><dd>{String(card.servings)}</dd></>)}
          {card.status != null && (<><dt>Status</dt><dd>{String(card.status)}</dd></>)}
        </dl>
        {actions.length > 0 && (
          <div className="actions">
            {actions.map((action, i) => {
              const a = (typeof action === 'object' && action ? action : { name: String(action) }) as Card;
              const verb = String(a.label ?? a.name ?? a.type ?? 'open');
              // An action is a request to the agent, written into the message box for the person to send.
              const text = `${verb[0]!.toUpperCase()}${verb.slice(1)} my recipe "${name}"${/modify|edit|change/i.test(verb) ? ': ' : ''}`;
              return (
                <button key={i} type="button" className="secondary small" onClick={() => window.dispatchEvent(new CustomEvent('brigade:compose', { detail: text }))}>
                  {verb[0]!.toUpperCase()}{verb.slice(1)}
                </button>
              );
            })}
            {card.recipe_id != null && <a className="button secondary small" href={`/recipes?id=${encodeURIComponent(String(card.recipe_id))}`}>In My recipes</a>}
          </div>
        )}
      </div>
    </article>
  );
}

export function BreweryCards({ breweries }: { breweries: Card[] }) {
  return (
    <ul className="brewery-cards" aria-label="Breweries">
      {breweries.map((b, i) => (
        <li key={String(b.id ?? i)} className="card brewery-card">
          <h3>{String(b.name ?? 'Brewery')}</h3>
          <p className="muted">{[b.brewery_type ?? b.type, [b.city, b.state ?? b.state_province].filter(Boolean).join(', ')].filter(Boolean).join(' · ')}</p>
          {typeof b.website_url === 'string' && b.website_url && <a href={b.website_url} target="_blank" rel="noreferrer">Website</a>}
          {b.phone != null && <p className="muted">{String(b.phone)}</p>}
        </li>
      ))}
    </ul>
  );
}

const CACHE_TEXT: Record<string, string> = {
  CACHE_HIT: 'from the cache (fresh)',
  CACHE_STALE: 'from the cache (stale: the source could not be reached)',
  CACHE_MISS: 'freshly fetched (not in the cache)',
};

function findCacheState(value: unknown, depth = 0): string | undefined {
  if (depth > 3 || !value || typeof value !== 'object') return typeof value === 'string' && value in CACHE_TEXT ? value : undefined;
  for (const v of Object.values(value as object)) {
    const found = findCacheState(v, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function findSources(value: unknown, depth = 0): unknown[] | undefined {
  if (depth > 3 || !value || typeof value !== 'object') return undefined;
  const obj = value as Record<string, unknown>;
  if (Array.isArray(obj.sources)) return obj.sources;
  for (const v of Object.values(obj)) {
    const found = findSources(v, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** A tool result that is a grounded summary: its text, cache state and sources, in view without expanding. */
export function ResultExtras({ result }: { result: unknown }) {
  const cache = findCacheState(result);
  const sources = findSources(result);
  if (!cache && !sources) return null;
  const r = (result ?? {}) as Record<string, unknown>;
  const summary = typeof r.summary === 'string' ? r.summary : typeof (r.summary as Card)?.text === 'string' ? String((r.summary as Card).text) : undefined;
  return (
    <div className="card summary-card">
      {summary && <p>{summary}</p>}
      {cache && (
        <p>
          <span className={`chip cache ${cache.toLowerCase()}`}>{cache}</span> {CACHE_TEXT[cache]}
        </p>
      )}
      {sources && sources.length > 0 && (
        <>
          <h4>Sources</h4>
          <ul className="sources">
            {sources.map((s, i) => {
              const src = (typeof s === 'object' && s ? s : { title: String(s) }) as Card;
              const url = typeof src.url === 'string' ? src.url : typeof src.uri === 'string' ? src.uri : typeof s === 'string' && /^https?:/.test(s) ? s : undefined;
              const title = String(src.title ?? src.name ?? url ?? 'source');
              return <li key={i}>{url ? <a href={url} target="_blank" rel="noreferrer">{title}</a> : title}</li>;
            })}
          </ul>
        </>
      )}
    </div>
  );
}

/** The chosen brewery's summary: the text, where it came from (its website, grounded search) and the cache. */
export function BrewerySummary({ card }: { card: Card }) {
  const cache = typeof card.cache_status === 'string' ? card.cache_status : undefined;
  const name = String(card.name ?? 'Brewery');
  return (
    <article className="card summary-card" aria-label={`Summary: ${name}`}>
      <h3>{name}</h3>
      {typeof card.summary === 'string' && card.summary ? <p>{card.summary}</p> : <p className="muted">No summary ({String(card.status ?? 'unavailable')}).</p>}
      {cache && (
        <p className="cache-line">
          <span className={`chip cache ${cache.toLowerCase()}`}>{cache}</span> {CACHE_TEXT[cache] ?? ''}
          {typeof card.cached_at === 'string' && <span className="muted"> · cached {new Date(card.cached_at).toLocaleString()}</span>}
        </p>
      )}
      <p className="sources-line">
        Sources:{' '}
        {typeof card.url === 'string' && card.url ? <a href={card.url} target="_blank" rel="noreferrer">{card.url}</a> : 'the brewery has no website'}
        {typeof card.sources === 'number' ? ` · ${card.sources} grounded search source${card.sources === 1 ? '' : 's'}` : ''}
      </p>
    </article>
  );
}
