// What a tool's cache state (CACHE_HIT, CACHE_STALE, CACHE_MISS) means, in words.
export const CACHE_TEXT: Record<string, string> = {
  CACHE_HIT: 'from the cache (fresh)',
  CACHE_STALE: 'from the cache (stale: the source could not be reached)',
  CACHE_MISS: 'fetched just now, not from the cache',
};

/** The chip beside the text: a word, not the code. */
export const CACHE_CHIP: Record<string, string> = { CACHE_HIT: 'cached', CACHE_STALE: 'stale', CACHE_MISS: 'fresh' };
