import type { Card } from './agentHome';
import { CACHE_CHIP, CACHE_TEXT } from './cacheStates';

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
          <span className={`chip cache ${cache.toLowerCase()}`}>{CACHE_CHIP[cache] ?? 'cache'}</span> {CACHE_TEXT[cache]}
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
