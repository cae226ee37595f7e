// search_breweries_tool: OpenBreweryDB near a place, minus the client's history, in the API's order.
// A failing API is a result (API_ERROR), never a thrown error: the model and the user see what happened.
import type { BreweryResult, SearchBreweriesArgs, SearchResult } from './definitions.ts';
import { apiPlaceName, historySet, inHistory, stateName } from './names.ts';
import { type ApiBrewery, type OpenBreweryDbOptions, OpenBreweryDbError, listBreweries } from './openbrewerydb.ts';

const UNAVAILABLE = 'Unavailable';

export async function searchBreweries(args: SearchBreweriesArgs, client: OpenBreweryDbOptions): Promise<SearchResult> {
  const started = performance.now();
  const state = args.state ? stateName(args.state) : undefined;
  const api_params: Record<string, string> = {
    ...(args.city ? { by_city: apiPlaceName(args.city) } : {}),
    ...(state ? { by_state: apiPlaceName(state) } : {}),
    ...(args.brewery_type ? { by_type: args.brewery_type } : {}),
    per_page: String(args.per_page),
  };
  const metadata: SearchResult['metadata'] = {
    query: { city: args.city ?? null, state: state ?? null, brewery_type: args.brewery_type ?? null, per_page: args.per_page },
    api_params,
    total_found: 0,
    filtered_out: 0,
    filtered_names: [],
    returned: 0,
    attempts: 0,
    elapsed_ms: 0,
  };
  const where = [args.city, state].filter(Boolean).join(', ');
  const what = args.brewery_type ? `${args.brewery_type} breweries` : 'breweries';

  let found: ApiBrewery[];
  try {
    const list = await listBreweries(
      { by_city: api_params.by_city, by_state: api_params.by_state, by_type: api_params.by_type, per_page: args.per_page },
      client,
    );
    found = list.breweries;
    metadata.attempts = list.attempts;
  } catch (error) {
    const failure = error instanceof OpenBreweryDbError ? error : new OpenBreweryDbError(String(error), 1);
    metadata.attempts = failure.attempts;
    metadata.elapsed_ms = Math.round(performance.now() - started);
    const failed = failure.code ?? (failure.status ? `HTTP ${failure.status}` : undefined);
    if (failed) metadata.failure = failed;
    // the failure's message names OpenBreweryDB already ("OpenBreweryDB could not be reached: ...")
    const said = failure.message.startsWith('OpenBreweryDB') ? failure.message : `OpenBreweryDB is unavailable: ${failure.message}`;
    return { status: 'API_ERROR', breweries: [], error: said, metadata };
  }

  const history = historySet(args.brewery_history);
  const fresh: BreweryResult[] = [];
  for (const brewery of found) {
    if (brewery.name && inHistory(brewery.name, history)) metadata.filtered_names.push(brewery.name);
    else fresh.push(toResult(brewery));
  }
  metadata.total_found = found.length;
  metadata.filtered_out = metadata.filtered_names.length;
  metadata.returned = fresh.length;
  metadata.elapsed_ms = Math.round(performance.now() - started);
  if (found.length === 0) return { status: 'NO_BREWERIES', breweries: [], message: `No ${what} found in ${where}.`, metadata };
  if (fresh.length === 0) {
    return {
      status: 'NO_NEW_BREWERIES',
      breweries: [],
      message: `All ${found.length} ${what} found in ${where} are already in the client's history.`,
      metadata,
    };
  }
  return { status: 'success', breweries: fresh, metadata };
}

/** The tool's result shape; whatever the API left out reads "Unavailable". */
export function toResult(brewery: ApiBrewery): BreweryResult {
  const field = (value: unknown) => {
    if (typeof value === 'number') return String(value);
    return typeof value === 'string' && value.trim() ? value : UNAVAILABLE;
  };
  return {
    brewery_id: field(brewery.id),
    brewery_name: field(brewery.name),
    brewery_type: field(brewery.brewery_type),
    address_1: field(brewery.address_1),
    address_2: field(brewery.address_2),
    address_3: field(brewery.address_3),
    street: field(brewery.street ?? brewery.address_1),
    city: field(brewery.city),
    state: field(brewery.state ?? brewery.state_province),
    state_province: field(brewery.state_province ?? brewery.state),
    postal_code: field(brewery.postal_code),
    country: field(brewery.country),
    phone: field(brewery.phone),
    website_url: field(brewery.website_url),
    latitude: field(brewery.latitude),
    longitude: field(brewery.longitude),
  };
}

export const clientOptions = (config: {
  OPENBREWERYDB_BASE_URL: string;
  OPENBREWERYDB_TIMEOUT: number;
  OPENBREWERYDB_MAX_ATTEMPTS: number;
}): OpenBreweryDbOptions => ({
  baseUrl: config.OPENBREWERYDB_BASE_URL,
  timeoutMs: config.OPENBREWERYDB_TIMEOUT,
  maxAttempts: config.OPENBREWERYDB_MAX_ATTEMPTS,
});
