// The offline model's phrasings for the beer agent's tools. The finder's come early ("find breweries in
// …" is not a customer lookup); the profile and analytical questions last. Analytical questions go to the
// tool as they were typed (the offline SQL generation reads them, offline-sql.ts).
import type { AgentOffline } from '../../model/offline-types.ts';
import type { JsonObject } from '../../shared/messages.ts';
import { stateName } from './names.ts';

const FINDER_RANK = 20;
const PROFILE_RANK = 50;

export const beerOfflineChat: Pick<AgentOffline, 'phrases' | 'rules'> = {
  phrases: [
    { tool: 'recommend_breweries', examples: ['recommend breweries', 'recommend some new breweries', 'recommend breweries again'] },
    { tool: 'search_breweries_tool', examples: ['find breweries in San Diego, CA', 'find micro breweries in Bend, OR'] },
    { tool: 'get_website_summary_tool', examples: ['summary of Stone Brewing http://www.stonebrew.com'] },
    { tool: 'get_client_profile_tool', examples: ['my profile', 'who am I'] },
    {
      tool: 'run_analytical_query_tool',
      examples: [
        'how many Budweiser did I buy',
        'my top breweries',
        'my top beers',
        'best-selling beer in California',
        'best-selling beer in Ohio',
        'best-selling beer in the Midwest',
        'what did CLT-CFY747 buy',
      ],
    },
  ],
  rules: [
    {
      rank: FINDER_RANK,
      tool: 'recommend_breweries',
      // "again": the breweries this conversation was offered before may be offered once more
      match: (text) =>
        /\brecommend\b[^.?!]*\bbrewer(?:y|ies)\b|\bbrewery\s+recommendations?\b/i.test(text)
          ? /\bagain\b/i.test(text)
            ? { include_earlier: true }
            : {}
          : undefined,
    },
    { rank: FINDER_RANK, tool: 'get_website_summary_tool', match: matchSummary },
    { rank: FINDER_RANK, tool: 'search_breweries_tool', match: matchBrewerySearch },
    // the profile is always the conversation's client's, so no id is needed
    {
      rank: PROFILE_RANK,
      tool: 'get_client_profile_tool',
      match: (text) => (/\b(?:my\s+(?:client\s+)?profile|who\s+am\s+i)\b/i.test(text) ? {} : undefined),
    },
    {
      rank: PROFILE_RANK,
      tool: 'run_analytical_query_tool',
      match: question(/\bhow\s+(?:many|much)\b.+\b(?:did|have)\s+(?:i|we)\s+(?:buy|bought|purchased?|order(?:ed)?)\b/i),
    },
    { rank: PROFILE_RANK, tool: 'run_analytical_query_tool', match: question(/\b(?:my|our)\s+top\s+(?:breweries|beers)\b/i) },
    { rank: PROFILE_RANK, tool: 'run_analytical_query_tool', match: question(/\b(?:best[-\s]selling|most\s+(?:sold|popular))\s+beer\b/i) },
    {
      rank: PROFILE_RANK,
      tool: 'run_analytical_query_tool',
      match: question(/\bwhat\s+(?:did|does|has)\s+(?:client\s+)?CLT-[A-Z0-9]+\s+(?:buy|bought|purchase)/i),
    },
  ],
};

function question(pattern: RegExp): (text: string) => JsonObject | undefined {
  return (text) => (pattern.test(text) ? { question: text.trim() } : undefined);
}

function matchSummary(text: string): JsonObject | undefined {
  const found = /\bsummary\s+(?:of|for)\s+(.+?)\s+(\S+)\s*$/i.exec(text.trim());
  return found ? { brewery_name: clean(found[1]!), url: clean(found[2]!) } : undefined;
}

function matchBrewerySearch(text: string): JsonObject | undefined {
  const found = /\bfind\s+(?:(\w+)\s+)?breweries\s+in\s+([^,]+?)(?:,\s*([a-z][a-z .]*?))?\s*[.!?]?$/i.exec(text.trim());
  if (!found) return undefined;
  const [, type, place, state] = found;
  // "in Oregon" alone is a state; "in Bend, OR" a city and its state
  return {
    ...(state ? { city: place!.trim(), state: state.trim() } : stateName(place!) ? { state: place!.trim() } : { city: place!.trim() }),
    ...(type && !/^(?:new|some|the|all)$/i.test(type) ? { brewery_type: type.toLowerCase() } : {}),
  };
}

function clean(token: string): string {
  return token.replace(/^["'(<]+/, '').replace(/[.,;!?)"'>]+$/, '');
}
