// get_client_profile_tool: the client's profile by client_id, falling back to postal_code with
// client_name, else not_found; list columns come back as lists; search_metadata says which way it was
// found, with the SQL and its time.
//
// The client is the conversation's. A different client_id is refused before any query; the lookup runs
// with brigade.client_id set to the conversation's client, so row-level security shows no other row
// (a postal code and name of another bar find nothing, as if it did not exist).
import type pg from 'pg';
import { setBeerClient } from './clients-db.ts';
import { asUser } from '../../db/pool.ts';
import type { ClientProfileArgs } from './tools.ts';
import type { ToolContext } from '../../activities/tool-context.ts';

export type SearchMethod = 'client_id' | 'postal_code_and_name' | 'not_found';

export interface SearchMetadata {
  method: SearchMethod;
  /** the query that ran (parameters as $n), for the record */
  sql: string;
  execution_time_ms: number;
  searched: { client_id?: string; postal_code?: string; client_name?: string };
}

export interface ClientProfileRow {
  client_id: string;
  client_name: string;
  client_location_city_state: string;
  client_city: string;
  client_state: string;
  postal_code: string;
  top3_brewery_types: string[];
  top5_beers_recently: string[];
  top3_breweries_recently: string[];
  /** every brewery the client bought from, most recent first */
  brewery_history: string[];
  search_metadata: SearchMetadata;
}

export type ProfileResult =
  ClientProfileRow | { status: 'not_found'; error: string; search_metadata: SearchMetadata } | { status: 'refused'; error: string };

const PROFILE_COLUMNS = `c.client_id, c.client_name, c.client_city, c.client_state, c.postal_code,
       c.top3_brewery_types, c.top5_beers_recently, c.top3_breweries_recently,
       coalesce((SELECT array_agg(h.brewery ORDER BY h.last_bought DESC, h.brewery)
                   FROM (SELECT p.brewery, max(p.purchased_on) AS last_bought
                           FROM beer.purchases p WHERE p.client_id = c.client_id GROUP BY p.brewery) AS h),
                '{}') AS brewery_history`;

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim();
export const PROFILE_BY_ID_SQL = oneLine(`SELECT ${PROFILE_COLUMNS} FROM beer.customers c WHERE c.client_id = $1`);
export const PROFILE_BY_POSTAL_AND_NAME_SQL = oneLine(
  `SELECT ${PROFILE_COLUMNS} FROM beer.customers c WHERE c.postal_code = $1 AND lower(c.client_name) = lower($2)`,
);

/** The same id however a model spells it: trimmed, upper case. */
export const normaliseClientId = (id: string): string => id.trim().toUpperCase();

export function refusedOtherClient(own: string, asked: string): { status: 'refused'; error: string } {
  return {
    status: 'refused',
    error: `This conversation acts for client ${own} only; the profile of another client (${asked}) is not available. Call get_client_profile_tool with client_id ${own}.`,
  };
}

/**
 * The profile of `clientId` (the conversation's client), for the tool and for the recommendation
 * workflow's activity. `db` must be inside a transaction as brigade_app: the client is set for it.
 * Without `lookup.client_id` it goes straight to the postal code and name when both are given, else by id.
 */
export async function getClientProfile(db: pg.ClientBase, clientId: string, lookup: ClientProfileArgs = {}): Promise<ProfileResult> {
  const own = normaliseClientId(clientId);
  const byName = lookup.postal_code !== undefined && lookup.client_name !== undefined;
  // no id and no postal code with name: the conversation's client is the one meant
  const asked = lookup.client_id === undefined ? (byName ? undefined : own) : normaliseClientId(lookup.client_id);
  if (asked !== undefined && asked !== own) return refusedOtherClient(own, asked);
  await setBeerClient(db, own);

  const searched = {
    ...(asked !== undefined ? { client_id: asked } : {}),
    ...(lookup.postal_code !== undefined ? { postal_code: lookup.postal_code.trim() } : {}),
    ...(lookup.client_name !== undefined ? { client_name: lookup.client_name.trim() } : {}),
  };
  let sql = PROFILE_BY_ID_SQL;
  const started = performance.now();
  if (asked !== undefined) {
    const { rows } = await db.query(PROFILE_BY_ID_SQL, [asked]);
    if (rows[0]) return toProfile(rows[0], { method: 'client_id', sql, execution_time_ms: elapsed(started), searched });
  }
  if (searched.postal_code && searched.client_name) {
    sql = PROFILE_BY_POSTAL_AND_NAME_SQL;
    const { rows } = await db.query(PROFILE_BY_POSTAL_AND_NAME_SQL, [searched.postal_code, searched.client_name]);
    if (rows[0]) return toProfile(rows[0], { method: 'postal_code_and_name', sql, execution_time_ms: elapsed(started), searched });
  }
  const by = [
    asked !== undefined ? `client_id ${asked}` : undefined,
    searched.postal_code && searched.client_name ? `postal code ${searched.postal_code} with name "${searched.client_name}"` : undefined,
  ].filter(Boolean);
  return {
    status: 'not_found',
    error: by.length ? `Client not found by ${by.join(', nor by ')}` : 'Client not found: give client_id, or postal_code with client_name',
    search_metadata: { method: 'not_found', sql, execution_time_ms: elapsed(started), searched },
  };
}

/** The same in a transaction of its own, as `userId` (for an activity, outside the runtime's transaction). */
export function loadClientProfile(pool: pg.Pool, userId: string, clientId: string, lookup: ClientProfileArgs = {}): Promise<ProfileResult> {
  return asUser(pool, userId, (db) => getClientProfile(db, clientId, lookup));
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;

function toProfile(row: Record<string, any>, search_metadata: SearchMetadata): ClientProfileRow {
  return {
    client_id: row.client_id,
    client_name: row.client_name,
    client_location_city_state: `${row.client_city}, ${row.client_state}`,
    client_city: row.client_city,
    client_state: row.client_state,
    postal_code: row.postal_code,
    top3_brewery_types: [...row.top3_brewery_types],
    top5_beers_recently: [...row.top5_beers_recently],
    top3_breweries_recently: [...row.top3_breweries_recently],
    brewery_history: [...row.brewery_history],
    search_metadata,
  };
}

export const NO_CLIENT = {
  status: 'error',
  error: "This conversation has no client: a beer conversation must be opened for a client (the token's, or named by beer-staff)",
} as const;

export const getClientProfileTool = async (args: ClientProfileArgs, context: ToolContext) => {
  if (!context.client) return NO_CLIENT;
  return getClientProfile(context.db, context.client, args);
};
