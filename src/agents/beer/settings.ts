// The beer agent's settings, part of the process configuration: its server side declares them (config), and
// src/config.ts reads them with the runtime's from the catalog, so a bad value is named at start like any other.
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { duration } from '../../shared/duration.ts';
import { positiveInt } from '../../shared/setting-schemas.ts';

export const beerSettings = {
  OPENBREWERYDB_BASE_URL: z.url({ error: 'must be a URL' }).default('https://api.openbrewerydb.org/v1'),
  OPENBREWERYDB_TIMEOUT: duration.default(10_000),
  OPENBREWERYDB_MAX_ATTEMPTS: positiveInt(3),
  /**
   * k of the aggregates: every figure across bars covers at least this many bars besides the asking one,
   * however answers are combined (src/agents/beer/migrations/017_beer_published_aggregates.sql)
   */
  BEER_MIN_CLIENTS: z.coerce.number().int().min(3, 'must be 3 or more: smaller groups describe one or two bars').default(3),
  /** how long the agent waits for "want details?" */
  BEER_CONFIRMATION_TIMEOUT: duration.default(30_000),
  /** age after which a cached website summary is stale */
  SUMMARY_CACHE_TTL: duration.default(30 * 86_400_000),
};

/** The process configuration as the beer agent reads it: the catalog's loadConfig parsed these too. */
export type BeerConfig = Config & z.infer<z.ZodObject<typeof beerSettings>>;
