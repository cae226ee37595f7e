// The beer agent's client (a bar) as row-level security sees it: beer.customers and beer.purchases show
// only the rows of the client in brigade.client_id, which the app sets per transaction from the
// conversation's client (the token's, or the body's for beer-staff), never from a model.
import type pg from 'pg';
import { asUser } from '../../db/pool.ts';

export const CLIENT_SETTING = 'brigade.client_id';

/** Makes `clientId` the client that row-level security shows, until the caller's transaction ends. */
export async function setBeerClient(db: pg.ClientBase, clientId: string): Promise<void> {
  await db.query('SELECT set_config($1, $2, true)', [CLIENT_SETTING, clientId]);
}

/** Whether beer.customers holds this client (checked as that client: nobody else's row is read). */
export function beerClientExists(pool: pg.Pool, userId: string, clientId: string): Promise<boolean> {
  return asUser(pool, userId, async (db) => {
    await setBeerClient(db, clientId);
    const { rows } = await db.query('SELECT 1 FROM beer.customers WHERE client_id = $1', [clientId]);
    return rows.length > 0;
  });
}

export interface BarRow {
  client_id: string;
  name: string;
  city: string;
  state: string;
}

/**
 * The bars of `scope` by name (beer.bars_for, which reads past row-level security): that one client, or
 * every bar for null. The caller decides the scope from the token (barsScope), never from a request.
 */
export function barsFor(pool: pg.Pool, userId: string, scope: string | null): Promise<BarRow[]> {
  return asUser(pool, userId, async (db) => {
    const { rows } = await db.query<BarRow>('SELECT client_id, name, city, state FROM beer.bars_for($1)', [scope]);
    return rows;
  });
}

/** Makes `minClients` the k of the aggregate views (read by beer.published_purchases on every query). */
export async function setBeerMinClients(pool: pg.Pool, minClients: number): Promise<void> {
  await pool.query('UPDATE beer.privacy SET min_clients = $1 WHERE min_clients IS DISTINCT FROM $1', [minClients]);
}
