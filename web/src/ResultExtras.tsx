import type { Card } from './agentHome';
import { CACHE_CHIP, CACHE_TEXT } from './cacheStates';
import { sourceLink } from './sourceLink';

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

/**
 * A tool result that is a grounded summary: its text, cache state and sources, in view without expanding.
 * `linkable`: the tool declares sources, so its https: sources are links (each with its host in view).
 */
export function ResultExtras({ result, linkable = false }: { result: unknown; linkable?: boolean }) {
  const cache = findCacheState(result);
  const sources = findSources(result);
  if (!cache && !sources) return null;
  const r = (result ?? {}) as Record<string, unknown>;
  const summary =
    typeof r.summary === 'string'
      ? r.summary
      : typeof (r.summary as Card)?.text === 'string'
        ? String((r.summary as Card).text)
        : undefined;
  return (
    <div className="card summary-card">
      {summary && <p>{summary}</p>}
      {cache && (
        <p>
          <span className={`chip cache ${cache.toLowerCase()}`}>{CACHE_CHIP[cache] ?? 'cache'}</span> {CACHE_TEXT[cache]}
        </p>
      )}
      {sources && sources.length > 0 && (
        <>
          <h4>Sources</h4>
          <ul className="sources">
            {sources.map((s, i) => {
              const src = (typeof s === 'object' && s ? s : { title: String(s) }) as Card;
              const url =
                typeof src.url === 'string' ? src.url : typeof src.uri === 'string' ? src.uri : typeof s === 'string' ? s : undefined;
              const { href, host } = sourceLink(url, linkable);
              const title = String(src.title ?? src.name ?? host ?? 'source');
              return (
                <li key={i}>
                  {href ? (
                    <a href={href} target="_blank" rel="noreferrer noopener">
                      {title}
                    </a>
                  ) : (
                    title
                  )}
                  {host && <span className="source-host"> ({host})</span>}
                </li>
              );
            })}
          </ul>
        </>
      )}
    </div>
  );
}
