// What a tool's cache state (CACHE_HIT, CACHE_STALE, CACHE_MISS) means, in words.
export const CACHE_TEXT: Record<string, string> = {
  CACHE_HIT: 'from the cache (fresh)',
  CACHE_STALE: 'from the cache (stale: the source could not be reached)',
  CACHE_MISS: 'freshly fetched (not in the cache)',
};
