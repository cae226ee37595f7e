// The beer agent's recommendation tools: search, website summary, and the five-step workflow that uses them.
// Joined into the agent's list (`beerTools`, tools.ts).
import {
  RECOMMENDATION_ID_PREFIX,
  RECOMMENDATION_WORKFLOW,
  RecommendArgs,
  SearchBreweriesArgs,
  WebsiteSummaryArgs,
} from './definitions.ts';
import { AUTO, defineChildTool, defineTool } from '../../shared/tool-spec.ts';

export const searchBreweriesTool = defineTool({
  name: 'search_breweries_tool',
  description:
    "Search OpenBreweryDB for breweries in a city and/or US state, optionally of one brewery type, leaving out the client's brewery history. Statuses: success, NO_BREWERIES, NO_NEW_BREWERIES, API_ERROR.",
  args: SearchBreweriesArgs,
  policy: AUTO,
});

export const websiteSummaryTool = defineTool({
  name: 'get_website_summary_tool',
  description:
    "A short summary of a brewery's website (speciality, what stands out, the visit), from a 30-day cache or Gemini grounded with Google Search. Statuses: success (cache_status CACHE_HIT, CACHE_STALE or CACHE_MISS), INVALID_URL, GROUNDING_FAILED. Only call it when the user asked for details.",
  args: WebsiteSummaryArgs,
  policy: AUTO,
});

export const recommendBreweriesTool = defineChildTool({
  name: 'recommend_breweries',
  description:
    'Run the whole recommendation for the authenticated client: profile, search near it minus its history, present 3 to 5 new breweries, ask the user whether they want details (30 s), and summarise the one they pick. Breweries already recommended in this conversation are not offered again; include_earlier: true only when the user asks for those again.',
  args: RecommendArgs,
  policy: AUTO,
  runner: { kind: 'child', workflow: RECOMMENDATION_WORKFLOW, idPrefix: RECOMMENDATION_ID_PREFIX },
});

export const beerFinderTools = [recommendBreweriesTool, searchBreweriesTool, websiteSummaryTool];
