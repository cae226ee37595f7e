// What the beer finder's tools, its recommendation workflow, its activities and the API share: argument
// schemas, result statuses, the workflow's search plan, its execution log and metrics, and the Query that
// exposes them. Plain data and pure functions (the workflow imports this).
import { defineQuery } from '@temporalio/workflow';
import { z } from 'zod';
import { simplifyBreweryName, stateName } from './names.ts';

export const BREWERY_TYPES = [
  'micro',
  'nano',
  'regional',
  'brewpub',
  'large',
  'planning',
  'bar',
  'contract',
  'proprietor',
  'closed',
  'taproom',
  'cidery',
  'beergarden',
  'location',
] as const;
export const BreweryType = z.enum(BREWERY_TYPES);
export type BreweryType = z.infer<typeof BreweryType>;

export const SearchBreweriesArgs = z
  .object({
    city: z.string().trim().min(1).max(100).optional().describe('City, e.g. "San Diego"'),
    state: z
      .string()
      .trim()
      .max(60)
      .refine((value) => stateName(value) !== undefined, 'must be a US state code such as "CA" (DC included) or a state name')
      .optional()
      .describe('US state: a two-letter code such as "CA" or the full name'),
    brewery_type: BreweryType.optional().describe('OpenBreweryDB brewery type, e.g. "micro"'),
    brewery_history: z
      .array(z.string().max(200))
      .max(500)
      .default([])
      .describe('Names of breweries the client already buys from; they are left out of the results'),
    per_page: z.number().int().min(1).max(200).default(50).describe('How many breweries to ask the API for (1-200)'),
  })
  .refine((args) => args.city !== undefined || args.state !== undefined, { message: 'name a city or a state', path: ['city'] });
export type SearchBreweriesArgs = z.infer<typeof SearchBreweriesArgs>;

export const WebsiteSummaryArgs = z.object({
  brewery_name: z.string().trim().min(1).max(200).describe('The brewery, e.g. "Stone Brewing"'),
  url: z.string().trim().min(1).max(500).describe("The brewery's website, e.g. http://www.stonebrew.com"),
  brewery_type: z.string().trim().max(40).optional(),
  address: z.string().trim().max(300).optional(),
});
export type WebsiteSummaryArgs = z.infer<typeof WebsiteSummaryArgs>;

export const RecommendArgs = z.object({
  include_earlier: z
    .boolean()
    .optional()
    .describe(
      'true only when the user asks to see breweries already recommended in this conversation again; left out, those are not offered twice',
    ),
});

export const SEARCH_STATUSES = ['success', 'NO_BREWERIES', 'NO_NEW_BREWERIES', 'API_ERROR'] as const;
export type SearchStatus = (typeof SEARCH_STATUSES)[number];
export const CACHE_STATES = ['CACHE_HIT', 'CACHE_STALE', 'CACHE_MISS'] as const;
export type CacheState = (typeof CACHE_STATES)[number];
export type SummaryStatus = 'success' | 'INVALID_URL' | 'GROUNDING_FAILED';

/** One brewery in the tool's result shape; every missing field is "Unavailable". */
export interface BreweryResult {
  brewery_id: string;
  brewery_name: string;
  brewery_type: string;
  address_1: string;
  address_2: string;
  address_3: string;
  street: string;
  city: string;
  state: string;
  state_province: string;
  postal_code: string;
  country: string;
  phone: string;
  website_url: string;
  latitude: string;
  longitude: string;
}

export interface SearchResult {
  status: SearchStatus;
  breweries: BreweryResult[];
  message?: string;
  error?: string;
  metadata: {
    query: { city: string | null; state: string | null; brewery_type: string | null; per_page: number };
    api_params: Record<string, string>;
    total_found: number;
    filtered_out: number;
    filtered_names: string[];
    returned: number;
    attempts: number;
    elapsed_ms: number;
    /** API_ERROR: what failed, for operators (a network error's code, an HTTP status) */
    failure?: string;
  };
}

export interface SummaryResult {
  status: SummaryStatus;
  brewery_name: string;
  url: string;
  summary: string | null;
  cache_status: CacheState | null;
  cached_at: string | null;
  error?: string;
  grounding: { queries: string[]; source_count: number } | null;
  metadata: { lookup_ms: number; elapsed_ms: number; grounded: boolean; model: string | null };
}

// ---- the recommendation workflow ---------------------------------------------------------------------

export const STEPS = ['profile', 'search', 'presentation', 'confirmation', 'summary'] as const;
export type StepName = (typeof STEPS)[number];

export const MIN_RECOMMENDATIONS = 3;
export const MAX_RECOMMENDATIONS = 5;
export const DEFAULT_CONFIRMATION_TIMEOUT_MS = 30_000;
export const CONFIRMATION_PROMPT = 'Would you like details on any of them?';

/** What the workflow needs of a client's profile. */
export interface ClientProfile {
  client_id: string;
  client_name: string;
  city: string;
  state: string;
  top_brewery_types: string[];
  brewery_history: string[];
}

export interface SearchQuery {
  city?: string;
  state: string;
  brewery_type?: BreweryType;
}

/**
 * Where to look, in order: the client's city with each of its top types, then the city with no type, then
 * the whole state. The workflow stops as soon as enough new breweries are found.
 */
export function searchPlan(profile: Pick<ClientProfile, 'city' | 'state' | 'top_brewery_types'>): SearchQuery[] {
  const types = [
    ...new Set(profile.top_brewery_types.filter((type): type is BreweryType => (BREWERY_TYPES as readonly string[]).includes(type))),
  ];
  const plan: SearchQuery[] = types.map((brewery_type) => ({ city: profile.city, state: profile.state, brewery_type }));
  plan.push({ city: profile.city, state: profile.state }, { state: profile.state });
  return plan;
}

/**
 * Adds a search's breweries to what was found so far: a closed brewery is no recommendation, and the same
 * brewery found twice (by type, then without) counts once. Returns how many were added.
 */
export function addNewBreweries(found: BreweryResult[], seen: Set<string>, breweries: readonly BreweryResult[]): number {
  let added = 0;
  for (const brewery of breweries) {
    const key = brewery.brewery_id !== 'Unavailable' ? brewery.brewery_id : simplifyBreweryName(brewery.brewery_name);
    if (brewery.brewery_type === 'closed' || seen.has(key)) continue;
    seen.add(key);
    found.push(brewery);
    added += 1;
  }
  return added;
}

export const CacheStateSchema = z.enum(CACHE_STATES);

export const LogEntry = z.object({
  step: z.enum(STEPS),
  tool: z.enum(['get_client_profile', 'search_breweries', 'get_website_summary']),
  at: z.string(),
  ms: z.number(),
  status: z.string(),
  cacheStatus: CacheStateSchema.nullable().optional(),
  detail: z.string().optional(),
});
export type LogEntry = z.infer<typeof LogEntry>;

export const ToolMetrics = z.object({
  calls: z.number().int(),
  totalMs: z.number(),
  avgMs: z.number(),
  // an object of the three states, not z.record: its JSON Schema would require keys it never declares
  cache: z.object({ CACHE_HIT: z.number().int(), CACHE_STALE: z.number().int(), CACHE_MISS: z.number().int() }).optional(),
});
export type ToolMetrics = z.infer<typeof ToolMetrics>;

export const GroundingMetrics = z.object({
  made: z.number().int(),
  /** presented breweries nobody asked details on: calls an eager agent would have made */
  savedByConfirmation: z.number().int(),
  /** summaries served from the cache */
  savedByCache: z.number().int(),
});

export const RecommendationMetrics = z.object({
  workflowId: z.string(),
  status: z.enum(['running', 'completed']),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  answer: z.enum(['yes', 'no', 'timeout']).nullable(),
  presented: z.number().int(),
  log: z.array(LogEntry),
  tools: z.record(z.string(), ToolMetrics),
  totals: z.object({ toolCalls: z.number().int(), toolMs: z.number(), elapsedMs: z.number() }),
  /** hits over summary lookups; null when there was none */
  cacheHitRate: z.number().nullable(),
  grounding: GroundingMetrics,
});
export type RecommendationMetrics = z.infer<typeof RecommendationMetrics>;

/** Builds the metrics from the execution log; pure, so the workflow's Query and the tests share it. */
export function metricsOf(run: {
  workflowId: string;
  startedAt: number;
  endedAt: number | null;
  now: number;
  answer: RecommendationMetrics['answer'];
  presented: number;
  log: LogEntry[];
  grounded: number;
}): RecommendationMetrics {
  const tools: Record<string, ToolMetrics> = {};
  for (const entry of run.log) {
    const tool = (tools[entry.tool] ??= { calls: 0, totalMs: 0, avgMs: 0 });
    tool.calls += 1;
    tool.totalMs += entry.ms;
    tool.avgMs = Math.round(tool.totalMs / tool.calls);
    if (entry.tool === 'get_website_summary') {
      tool.cache ??= { CACHE_HIT: 0, CACHE_STALE: 0, CACHE_MISS: 0 };
      if (entry.cacheStatus) tool.cache[entry.cacheStatus] += 1;
    }
  }
  const summaries = run.log.filter((entry) => entry.tool === 'get_website_summary' && entry.cacheStatus);
  const hits = summaries.filter((entry) => entry.cacheStatus === 'CACHE_HIT').length;
  const asked = run.log.filter((entry) => entry.tool === 'get_website_summary').length;
  return {
    workflowId: run.workflowId,
    status: run.endedAt === null ? 'running' : 'completed',
    startedAt: new Date(run.startedAt).toISOString(),
    endedAt: run.endedAt === null ? null : new Date(run.endedAt).toISOString(),
    answer: run.answer,
    presented: run.presented,
    log: run.log,
    tools,
    totals: {
      toolCalls: run.log.length,
      toolMs: run.log.reduce((sum, entry) => sum + entry.ms, 0),
      elapsedMs: (run.endedAt ?? run.now) - run.startedAt,
    },
    cacheHitRate: summaries.length ? hits / summaries.length : null,
    grounding: {
      made: run.grounded,
      savedByConfirmation: run.endedAt === null ? 0 : Math.max(0, run.presented - asked),
      savedByCache: hits,
    },
  };
}

/** The recommendation workflow's execution log and metrics. */
export const beerMetricsQuery = defineQuery<RecommendationMetrics>('beerMetrics');

export const RECOMMENDATION_WORKFLOW = 'breweryRecommendation';
export const RECOMMENDATION_ID_PREFIX = 'brewery-recommendation';

// ---- activities (signatures only: the workflow imports them as types) ----------------------------------

export interface ProfileActivityInput {
  userId: string;
  client: string;
  /** the conversation whose earlier recommendations to leave out (absent in inputs scheduled before issue 46) */
  conversationId?: string;
}
export interface ProfileActivityResult {
  profile: ClientProfile | null;
  ms: number;
  /** brewery ids this conversation was already offered (absent in results recorded before issue 46) */
  recommendedBefore?: string[];
}
export interface SearchActivityResult {
  result: SearchResult;
  ms: number;
}
export interface SummaryActivityResult {
  result: SummaryResult;
  ms: number;
}

export interface BeerActivities {
  beerProfile(input: ProfileActivityInput): Promise<ProfileActivityResult>;
  beerSearch(input: SearchBreweriesArgs): Promise<SearchActivityResult>;
  /** userId and conversationId: who the grounding call is charged to (absent only in inputs scheduled before issue 29) */
  beerSummary(input: WebsiteSummaryArgs & { userId?: string; conversationId?: string }): Promise<SummaryActivityResult>;
}

export const ConversationMetrics = z.object({
  workflows: z.number().int(),
  tools: z.record(z.string(), ToolMetrics),
  toolCalls: z.number().int(),
  toolMs: z.number(),
  cacheHitRate: z.number().nullable(),
  grounding: GroundingMetrics,
});
export type ConversationMetrics = z.infer<typeof ConversationMetrics>;

/** GET /v1/conversations/:id/metrics */
export const ConversationMetricsView = z.object({
  conversationId: z.string(),
  workflows: z.array(RecommendationMetrics),
  /** recommendation runs whose history Temporal no longer keeps */
  unavailable: z.array(z.string()),
  totals: ConversationMetrics,
});

/** A conversation's totals over its recommendation workflows. */
export function aggregateMetrics(runs: readonly RecommendationMetrics[]): ConversationMetrics {
  const tools: Record<string, ToolMetrics> = {};
  for (const run of runs) {
    for (const [name, metrics] of Object.entries(run.tools)) {
      const total = (tools[name] ??= { calls: 0, totalMs: 0, avgMs: 0 });
      total.calls += metrics.calls;
      total.totalMs += metrics.totalMs;
      total.avgMs = Math.round(total.totalMs / total.calls);
      if (metrics.cache) {
        total.cache ??= { CACHE_HIT: 0, CACHE_STALE: 0, CACHE_MISS: 0 };
        for (const state of CACHE_STATES) total.cache[state] += metrics.cache[state];
      }
    }
  }
  const cache = tools.get_website_summary?.cache;
  const lookups = cache ? cache.CACHE_HIT + cache.CACHE_STALE + cache.CACHE_MISS : 0;
  return {
    workflows: runs.length,
    tools,
    toolCalls: runs.reduce((sum, run) => sum + run.totals.toolCalls, 0),
    toolMs: runs.reduce((sum, run) => sum + run.totals.toolMs, 0),
    cacheHitRate: lookups ? cache!.CACHE_HIT / lookups : null,
    grounding: {
      made: runs.reduce((sum, run) => sum + run.grounding.made, 0),
      savedByConfirmation: runs.reduce((sum, run) => sum + run.grounding.savedByConfirmation, 0),
      savedByCache: runs.reduce((sum, run) => sum + run.grounding.savedByCache, 0),
    },
  };
}
