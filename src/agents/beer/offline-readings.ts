// How the offline model reads the beer agent's results aloud: the bar's profile, a recommendation, a brewery
// search, a website summary (AgentServer.offline.describe, by tool name).
type Obj = Record<string, unknown>;

const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;

function describeSummary(summary: Obj): string {
  if (typeof summary.summary !== 'string')
    return `No summary of ${text(summary.brewery_name)}: ${text(summary.error) ?? text(summary.status)}.`;
  const cache =
    { CACHE_HIT: 'from the cache', CACHE_STALE: 'refreshed, the cached one was stale', CACHE_MISS: 'new' }[String(summary.cache_status)] ??
    '';
  return `${text(summary.brewery_name)} (${cache}): ${summary.summary}`;
}

function describeRecommendation(value: unknown): string | undefined {
  if (!isObject(value) || typeof value.presentation !== 'string') return undefined;
  const answer =
    value.answer === 'timeout'
      ? 'No answer came in time, so no details were fetched.'
      : value.answer === 'no'
        ? 'No details requested.'
        : isObject(value.summary)
          ? describeSummary(value.summary)
          : '';
  // a paragraph of its own: on the line under the list, Markdown reads it as part of the list's last item
  return `${value.presentation}\n\n${answer}`.trim();
}

function describeSearch(value: unknown): string | undefined {
  if (!isObject(value) || !Array.isArray(value.breweries) || value.status !== 'success') return undefined;
  const breweries = value.breweries as Obj[];
  const list = breweries
    .slice(0, 10)
    .map((b, i) => `${i + 1}. ${text(b.brewery_name)} (${text(b.brewery_type)}) - ${text(b.city)}, ${text(b.state)}`);
  const more = breweries.length > 10 ? `\n...and ${breweries.length - 10} more.` : '';
  return `Found ${breweries.length} new ${breweries.length === 1 ? 'brewery' : 'breweries'}:\n${list.join('\n')}${more}`;
}

const describeWebsite = (value: unknown) =>
  isObject(value) && typeof value.summary === 'string' && typeof value.cache_status === 'string' ? describeSummary(value) : undefined;

/** The bar's profile as its staff say it: no client id, no SQL or timings. */
function describeProfile(value: unknown): string | undefined {
  if (!isObject(value) || typeof value.client_name !== 'string') return undefined;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(text).filter(Boolean).join(', ') : '');
  const history = Array.isArray(value.brewery_history) ? value.brewery_history.length : 0;
  return [
    `${value.client_name}${text(value.client_location_city_state) ? `, ${text(value.client_location_city_state)}` : ''}.`,
    list(value.top3_brewery_types) && `Favourite kinds: ${list(value.top3_brewery_types)}.`,
    list(value.top5_beers_recently) && `Top beers lately: ${list(value.top5_beers_recently)}.`,
    list(value.top3_breweries_recently) && `Top breweries lately: ${list(value.top3_breweries_recently)}.`,
    history && `Bought from ${history} ${history === 1 ? 'brewery' : 'breweries'} so far.`,
  ]
    .filter(Boolean)
    .join(' ');
}

export const beerReadings = {
  get_client_profile_tool: describeProfile,
  recommend_breweries: describeRecommendation,
  search_breweries_tool: describeSearch,
  get_website_summary_tool: describeWebsite,
};
