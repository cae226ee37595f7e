// The beer agent's results laid out to read (issue 46, item 5): a search's breweries as the same cards the
// recommendation shows (type, city, website, phone), the bar's profile as a card, a sales question's rows as a
// table, a website's summary as text. No ids (the bar's CLT- number, a brewery's), SQL or timings on screen.
import { type ReactNode, useState } from 'react';
import { RowsTable, cellText } from '../../RowsTable';
import { BreweryCards } from './BreweryCards';
import { Fact, type Row, isObject } from '../../resultParts';

const list = (v: unknown): string => (Array.isArray(v) ? v.map(cellText).filter(Boolean).join(', ') : '');

/** search_breweries_tool: the breweries found, as cards. */
export function breweriesView(result: unknown): ReactNode | undefined {
  if (!isObject(result) || !Array.isArray(result.breweries)) return undefined;
  const breweries = result.breweries.filter(isObject).map((b) => ({ ...b, id: b.brewery_id, name: b.brewery_name ?? b.name }));
  // none found: the sentence says so
  return breweries.length ? <SearchCards breweries={breweries} /> : null;
}

/** a search returns up to 50: the first few as cards, the rest one click away */
const FIRST = 9;

function SearchCards({ breweries }: { breweries: Row[] }) {
  const [all, setAll] = useState(false);
  const shown = all ? breweries : breweries.slice(0, FIRST);
  return (
    <>
      <BreweryCards card={{ type: 'breweries', breweries: shown }} />
      {shown.length < breweries.length && (
        <button type="button" className="secondary" onClick={() => setAll(true)}>
          Show all {breweries.length} breweries
        </button>
      )}
    </>
  );
}

/** get_client_profile_tool: the bar as its staff know it. */
export function profileView(result: unknown): ReactNode | undefined {
  if (!isObject(result) || typeof result.client_name !== 'string') return undefined;
  const name = result.client_name;
  const history = Array.isArray(result.brewery_history) ? result.brewery_history.length : 0;
  return (
    <article className="card result-card profile-card" aria-label={`Profile of ${name}`}>
      <div className="card-body">
        <h3>{name}</h3>
        <dl className="facts">
          <Fact term="Where">{cellText(result.client_location_city_state)}</Fact>
          <Fact term="Postal code">{cellText(result.postal_code)}</Fact>
          <Fact term="Favourite kinds">{list(result.top3_brewery_types)}</Fact>
          <Fact term="Top beers lately">{list(result.top5_beers_recently)}</Fact>
          <Fact term="Top breweries lately">{list(result.top3_breweries_recently)}</Fact>
          <Fact term="Bought from">{history ? `${history} ${history === 1 ? 'brewery' : 'breweries'} so far` : ''}</Fact>
        </dl>
      </div>
    </article>
  );
}

/** run_analytical_query_tool: the rows as a table, captioned with the question. */
export function salesView(result: unknown, args: Row): ReactNode | undefined {
  if (!isObject(result) || !Array.isArray(result.rows)) return undefined;
  const rows = result.rows.filter(isObject);
  if (rows.length === 0) return null;
  const question = cellText(result.question) || cellText(args.question);
  return <RowsTable rows={rows} caption={question || 'Your sales'} />;
}

/** get_website_summary_tool: what the website says, as text. */
export function websiteSummaryView(result: unknown): ReactNode | undefined {
  if (!isObject(result) || typeof result.summary !== 'string') return undefined;
  return <p className="card result-card website-summary">{result.summary}</p>;
}
