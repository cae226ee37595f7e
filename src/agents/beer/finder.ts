// The beer finder's tools as the runTool activity runs them (recommend_breweries is a child workflow).
import type { ToolContext } from '../../activities/tool-context.ts';
import type { SearchBreweriesArgs, WebsiteSummaryArgs } from './definitions.ts';
import { clientOptions, searchBreweries } from './search.ts';
import { getWebsiteSummary } from './summary.ts';
import type { BeerConfig } from './settings.ts';
import { toolCallKey } from '../../activities/usage-meter.ts';

export const beerFinderImplementations = {
  search_breweries_tool: (args: SearchBreweriesArgs, { services }: ToolContext) =>
    searchBreweries(args, clientOptions(services.config as BeerConfig)),
  // The cache is shared and locked per brewery on its own connection, outside the call's recording transaction.
  // The grounding call ends before the runTool local activity's 30 s limit, so a slow model is a
  // GROUNDING_FAILED result rather than a retried activity that would call the model again.
  get_website_summary_tool: (args: WebsiteSummaryArgs, { services, userId, conversationId, callId }: ToolContext) =>
    getWebsiteSummary(args, {
      pool: services.pool,
      taskModel: services.taskModel,
      charge: { userId, conversationId, key: toolCallKey({ conversationId, callId }, 'summary') },
      ttlMs: (services.config as BeerConfig).SUMMARY_CACHE_TTL,
      groundingTimeoutMs: Math.min(services.config.MODEL_TIMEOUT, 25_000),
    }),
};
