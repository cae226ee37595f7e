// A local OpenBreweryDB v1 serving the fixture dataset (test/fixtures/openbrewerydb-breweries.csv) with the
// real API's filters and JSON fields, for tests and the bench. It can fail on demand:
//
//   const api = await startFakeOpenBreweryDb();
//   api.failNext('500', '429', 'drop');   // the next three requests fail, then it answers again
//   api.failAlways('500');                 // every request fails until failAlways(undefined)
//   api.requests                           // what reached it, oldest first
//
// Filters: by_city (underscores or spaces, case-insensitive, matched as a substring like the real API),
// by_state (full name), by_type, per_page (default 50, at most 200), page (from 1).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Failure = '500' | '503' | '429' | 'drop' | 'hang';

export interface FakeBrewery {
  id: string;
  name: string;
  brewery_type: string;
  address_1: string | null;
  address_2: string | null;
  address_3: string | null;
  city: string;
  state_province: string;
  postal_code: string | null;
  country: string;
  longitude: number | null;
  latitude: number | null;
  phone: string | null;
  website_url: string | null;
  state: string;
  street: string | null;
}

export interface FakeOpenBreweryDb {
  /** pass as OPENBREWERYDB_BASE_URL */
  baseUrl: string;
  breweries: readonly FakeBrewery[];
  requests: { path: string; query: Record<string, string> }[];
  failNext(...failures: Failure[]): void;
  failAlways(failure: Failure | undefined): void;
  /** answers each request this long after it came (0: at once), as a slow network would */
  delayAll(ms: number): void;
  reset(): void;
  close(): Promise<void>;
}

const FIXTURE = new URL('../fixtures/openbrewerydb-breweries.csv', import.meta.url);
let loaded: FakeBrewery[] | undefined;

export function fixtureBreweries(): FakeBrewery[] {
  loaded ??= parseCsv(fs.readFileSync(FIXTURE, 'utf8')).map(toBrewery);
  return loaded;
}

export async function startFakeOpenBreweryDb(): Promise<FakeOpenBreweryDb> {
  const breweries = fixtureBreweries();
  const requests: FakeOpenBreweryDb['requests'] = [];
  const queue: Failure[] = [];
  let always: Failure | undefined;
  let delayMs = 0;

  const server = http.createServer((req, res) => {
    if (delayMs) setTimeout(() => answer(req, res), delayMs);
    else answer(req, res);
  });
  const answer = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake-openbrewerydb');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ path: url.pathname, query });
    const failure = queue.shift() ?? always;
    if (failure === 'drop') return void req.socket.destroy();
    if (failure === 'hang') return; // never answers: the client's timeout must fire
    if (failure) return send(res, Number(failure), { message: `fake-openbrewerydb: ${failure}` });
    if (req.method !== 'GET' || !/^\/v1\/breweries\/?$/.test(url.pathname)) return send(res, 404, { message: "Couldn't find Brewery" });
    const perPage = Math.min(200, Math.max(1, Number(query.per_page ?? 50) || 50));
    const page = Math.max(1, Number(query.page ?? 1) || 1);
    const place = (value: string) => value.toLowerCase().replace(/_/g, ' ').trim();
    const matches = breweries.filter(
      (b) =>
        (!query.by_city || place(b.city).includes(place(query.by_city))) &&
        (!query.by_state || place(b.state_province) === place(query.by_state)) &&
        (!query.by_type || b.brewery_type === query.by_type.toLowerCase()),
    );
    send(res, 200, matches.slice((page - 1) * perPage, page * perPage));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    breweries,
    requests,
    failNext: (...failures) => void queue.push(...failures),
    failAlways: (failure) => void (always = failure),
    delayAll: (ms) => void (delayMs = ms),
    reset() {
      requests.length = 0;
      queue.length = 0;
      always = undefined;
      delayMs = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function toBrewery(row: Record<string, string>): FakeBrewery {
  const orNull = (value: string | undefined) => (value ? value : null);
  const number = (value: string | undefined) => (value ? Number(value) : null);
  return {
    id: row.id!,
    name: row.name!,
    brewery_type: row.brewery_type!,
    address_1: orNull(row.address_1),
    address_2: orNull(row.address_2),
    address_3: orNull(row.address_3),
    city: row.city!,
    state_province: row.state_province!,
    postal_code: orNull(row.postal_code),
    country: row.country!,
    longitude: number(row.longitude),
    latitude: number(row.latitude),
    phone: orNull(row.phone),
    website_url: orNull(row.website_url),
    // v1 keeps these two deprecated fields beside state_province and address_1
    state: row.state_province!,
    street: orNull(row.address_1),
  };
}

/** RFC 4180: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...body] = rows;
  return body.filter((cells) => cells.length > 1).map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i] ?? ''])));
}
