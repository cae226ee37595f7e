// Explicit context caching for Gemini (GEMINI_CONTEXT_CACHE=explicit): what precedes a conversation in every
// request (the system instruction and the tool declarations) is stored once with caches.create and named in
// later calls (`cachedContent`) instead of being sent again; Gemini bills the cached tokens at a lower rate and
// their storage by the hour. The default, `implicit`, sends the prefix as it is and lets Gemini cache a repeated
// prefix on its own (gemini.ts keeps it byte-stable), which costs nothing to set up.
//
// A cache is a convenience, never a condition: where the model or the server refuses one (caches.create fails,
// or a call naming it is refused), the call goes on without it and the refusal is remembered for a while, so a
// model that cannot cache is not asked again on every call.
import { createHash } from 'node:crypto';
import type { GoogleGenAI, Tool } from '@google/genai';
import { TtlLru } from '../shared/ttl-lru.ts';
import { estimateTokens } from './token-estimate.ts';

export interface ContextCacheSettings {
  mode: 'implicit' | 'explicit';
  /** how long a cache lives on Gemini's side (its storage is billed for this long) */
  ttlMs: number;
  /** a prefix smaller than this (estimated tokens) is sent as it is: Gemini refuses caches below its minimum */
  minTokens: number;
}

/** What precedes the transcript: the part a cache can hold. */
export interface CachePrefix {
  systemInstruction?: { parts: { text: string }[] };
  tools?: Tool[];
}

/** How long a refusal is remembered before the model is asked for a cache again. */
export const REFUSAL_MEMORY_MS = 10 * 60_000;
/** A cache is used until this long before it expires, so that a call never names one that is gone. */
const EXPIRY_MARGIN_MS = 30_000;

export interface ContextCache {
  /** the name of a cache holding `prefix` (made now when there is none), or undefined: send the prefix itself */
  nameFor(prefix: CachePrefix): Promise<string | undefined>;
  /** a call naming a cache was refused: forget the caches, and ask for none for a while */
  refused(): void;
}

export function createContextCache(client: GoogleGenAI, model: string, settings: ContextCacheSettings): ContextCache {
  const live = Math.max(1_000, settings.ttlMs - EXPIRY_MARGIN_MS);
  // keyed by the prefix's hash; the value is the creation in flight too, so concurrent calls make one cache
  const caches = new TtlLru<string, Promise<string | undefined>>({ ttlMs: live, max: 256 });
  const refusals = new TtlLru<string, true>({ ttlMs: REFUSAL_MEMORY_MS, max: 1 });
  const refuse = () => refusals.set(model, true);

  return {
    async nameFor(prefix) {
      if (settings.mode !== 'explicit' || refusals.get(model)) return undefined;
      const text = JSON.stringify(prefix);
      if (estimateTokens(text) < settings.minTokens) return undefined;
      const key = createHash('sha256').update(model).update('\n').update(text).digest('hex');
      let name = caches.get(key);
      if (!name) {
        name = client.caches
          .create({
            model,
            config: {
              ...prefix,
              ttl: `${Math.ceil(settings.ttlMs / 1000)}s`,
              displayName: `brigade-${key.slice(0, 16)}`,
            },
          })
          .then((created) => created.name ?? undefined)
          // any refusal (a model without caching, a prefix below its minimum, a quota): go on without, remembered
          .catch(() => {
            refuse();
            return undefined;
          });
        caches.set(key, name);
      }
      return name;
    },
    refused() {
      // the model's caches are all suspect (expired early, deleted, or the model no longer takes them)
      caches.deleteWhere(() => true);
      refuse();
    },
  };
}

/** Whether a failed call was refused because of the cache it named (expired, deleted, not allowed with this model). */
export function refusedForCache(error: unknown): boolean {
  const status = (error as { status?: unknown } | undefined)?.status;
  const message = String((error as { message?: unknown } | undefined)?.message ?? '');
  return (status === 400 || status === 403 || status === 404) && /cached_?content/i.test(message);
}
