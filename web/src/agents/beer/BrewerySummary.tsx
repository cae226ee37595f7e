import type { Card } from '../../agentHome';
import { CACHE_CHIP, CACHE_TEXT } from '../../cacheStates';

/** The chosen brewery's summary: the text, where it came from (its website, grounded search) and the cache. */
export function BrewerySummary({ card }: { card: Card }) {
  const cache = typeof card.cache_status === 'string' ? card.cache_status : undefined;
  const name = String(card.name ?? 'Brewery');
  return (
    <article className="card summary-card" aria-label={`Summary: ${name}`}>
      <h3>{name}</h3>
      {typeof card.summary === 'string' && card.summary ? (
        <p>{card.summary}</p>
      ) : (
        <p className="muted">No summary ({String(card.status ?? 'unavailable')}).</p>
      )}
      {cache && (
        <p className="cache-line">
          <span className={`chip cache ${cache.toLowerCase()}`}>{CACHE_CHIP[cache] ?? 'cache'}</span> {CACHE_TEXT[cache] ?? ''}
          {typeof card.cached_at === 'string' && <span className="muted"> · cached {new Date(card.cached_at).toLocaleString()}</span>}
        </p>
      )}
      <p className="sources-line">
        Sources:{' '}
        {typeof card.url === 'string' && card.url ? (
          <a href={card.url} target="_blank" rel="noreferrer">
            {card.url}
          </a>
        ) : (
          'the brewery has no website'
        )}
        {typeof card.sources === 'number' ? ` · ${card.sources} grounded search source${card.sources === 1 ? '' : 's'}` : ''}
      </p>
    </article>
  );
}
