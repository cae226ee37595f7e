// The beer agent: breweries recommended for a bar, one chosen within a countdown, and its summary; the bar
// chosen by name when a conversation starts, and named in its header and its tab's title.
import type { AgentHome } from '../../agentHome';
import { BarName, barTabName } from './BarName';
import { BarPicker } from './BarPicker';
import { BreweryCards } from './BreweryCards';
import { BrewerySummary } from './BrewerySummary';
import { ConfirmationCard } from './ConfirmationCard';
import { breweriesView, profileView, salesView, websiteSummaryView } from './views';

type Args = Record<string, unknown>;
const count = (n: number, one: string, many: string) => (n === 1 ? `1 ${one}` : `${n} ${many}`);

export const beer: AgentHome = {
  label: 'Beer',
  description: 'Knows your bar’s sales and recommends breweries it does not stock yet, with what their websites say.',
  firstPrompt: 'my top beers',
  Subtitle: BarName,
  tabName: barTabName,
  clientPicker: BarPicker,
  pendingKinds: { confirmation: { View: ConfirmationCard, label: 'Confirmation' } },
  cards: { breweries: BreweryCards, brewery_summary: BrewerySummary },
  examples: ['recommend breweries', 'my top beers', 'find breweries in San Diego, CA', 'best-selling beer in California'],
  tools: {
    recommend_breweries: {
      call: () => 'Recommend new breweries for your bar',
      // its cards (the breweries, the chosen one's summary) and progress say the rest
      view: () => null,
    },
    search_breweries_tool: {
      call: (a) =>
        `Search breweries${a.city ? ` in ${String(a.city)}` : ''}${a.state ? `${a.city ? ', ' : ' in '}${String(a.state)}` : ''}`,
      result: (r: Args) =>
        Array.isArray(r.breweries) && r.breweries.length
          ? `Found ${count(r.breweries.length, 'brewery', 'breweries')} your bar does not buy from yet.`
          : typeof r.message === 'string'
            ? r.message
            : undefined,
      view: breweriesView,
    },
    get_website_summary_tool: {
      call: (a) => `Read the website of ${String(a.brewery_name ?? a.name ?? a.url ?? 'the brewery')}`,
      result: (r: Args, a) =>
        typeof r.summary === 'string' ? `What the website of ${String(a.brewery_name ?? 'the brewery')} says:` : undefined,
      view: websiteSummaryView,
    },
    get_client_profile_tool: {
      call: () => "Read your bar's profile",
      result: (r: Args) => (typeof r.client_name === 'string' ? `Your bar's profile: ${r.client_name}.` : undefined),
      view: profileView,
    },
    run_analytical_query_tool: {
      call: (a) => (typeof a.question === 'string' ? `Look up your sales: ${a.question}` : 'Look up your sales'),
      result: (r: Args) =>
        Array.isArray(r.rows)
          ? r.rows.length
            ? `Found ${count(r.rows.length, 'row', 'rows')}.`
            : typeof r.message === 'string'
              ? r.message
              : 'No rows.'
          : undefined,
      view: salesView,
    },
  },
};
