// The recommendation workflow's activities: the client's profile, one OpenBreweryDB search, one website
// summary. Each reports its own duration for the workflow's execution log. All are idempotent: the
// profile and the search only read; the summary fills a cache whose key is locked while it is filled.
import type { BeerConfig } from './settings.ts';
import type { BeerActivities } from './definitions.ts';
import { loadClientProfile } from './profile.ts';
import { clientOptions, searchBreweries } from './search.ts';
import { getWebsiteSummary } from './summary.ts';
import { toClientProfile } from './profile-adapter.ts';
import { recommendedBefore } from './recommended-before.ts';
import type { Services } from '../../activities/services.ts';
import { activityCallKey } from '../../activities/usage-meter.ts';

/** Reads the client's profile as the beer agent's profile tool does; null when there is none. */
export type ProfileSource = (services: Services, input: { userId: string; client: string }) => Promise<Record<string, unknown> | null>;

/** The beer agent's own profile lookup, as the conversation's user with row-level security on its client. */
export const beerProfileSource: ProfileSource = async ({ pool }, { userId, client }) => {
  const found = await loadClientProfile(pool, userId, client);
  return 'status' in found ? null : { ...found };
};

export function createBeerActivities(services: Services, profileSource: ProfileSource): BeerActivities {
  const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;
  return {
    async beerProfile(input) {
      const started = performance.now();
      const raw = await profileSource(services, input);
      const profile = raw ? toClientProfile(raw) : null;
      const earlier = profile && input.conversationId ? await recommendedBefore(services.pool, input.userId, input.conversationId) : [];
      return { profile, ms: elapsed(started), ...(input.conversationId ? { recommendedBefore: earlier } : {}) };
    },
    async beerSearch(args) {
      const started = performance.now();
      const result = await searchBreweries(args, clientOptions(services.config as BeerConfig));
      return { result, ms: elapsed(started) };
    },
    async beerSummary({ userId, conversationId, ...args }) {
      const started = performance.now();
      const result = await getWebsiteSummary(args, {
        pool: services.pool,
        taskModel: services.taskModel,
        charge: { userId: userId ?? '', ...(conversationId ? { conversationId } : {}), key: activityCallKey('summary') },
        ttlMs: (services.config as BeerConfig).SUMMARY_CACHE_TTL,
      });
      return { result, ms: elapsed(started) };
    },
  };
}
