// GET /v1/beer/clients/:clientId: the bar a beer conversation acts for, by name, so a person reads
// "Great Lakes Brewing Company" rather than CLT-XLX836. Only a client the token may act for: its own, or
// any for beer staff (as POST /v1/conversations allows); read as that client, so row-level security shows
// no one else's row. A client nobody may see is a 404, never a hint that it exists.
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { asUser } from '../../db/pool.ts';
import type { OpenApiHelpers } from '../../agent-server.ts';
import { principalOf } from '../../api/auth.ts';
import { notFound } from '../../api/http-error.ts';
import { setBeerClient } from './clients-db.ts';
import { BEER_STAFF_ROLE } from './spec.ts';

export const BeerClientView = z.object({ clientId: z.string(), name: z.string(), city: z.string().nullable(), state: z.string().nullable() });

export function beerClientRoutes({ pool }: { pool: pg.Pool }): Router {
  const router = Router();
  router.get('/beer/clients/:clientId', async (req, res) => {
    const principal = principalOf(res);
    const clientId = String(req.params.clientId);
    const mayActFor = principal.client ? principal.client === clientId : principal.roles.includes(BEER_STAFF_ROLE);
    if (!mayActFor || !/^CLT-[A-Z0-9]+$/.test(clientId)) throw notFound();
    const row = await asUser(pool, principal.user, async (db) => {
      await setBeerClient(db, clientId);
      const { rows } = await db.query<{ client_id: string; name: string; city: string | null; state: string | null }>(
        'SELECT client_id, client_name AS name, client_city AS city, client_state AS state FROM beer.customers WHERE client_id = $1',
        [clientId],
      );
      return rows[0];
    });
    if (!row) throw notFound();
    res.json({ clientId: row.client_id, name: row.name, city: row.city, state: row.state });
  });
  return router;
}

export function beerClientPaths({ json, errors }: OpenApiHelpers): Record<string, unknown> {
  return {
    '/v1/beer/clients/{clientId}': {
      get: {
        summary: "Beer: the bar a conversation acts for, by name: the token's own client, or any client for beer staff",
        parameters: [{ name: 'clientId', in: 'path', required: true, schema: { type: 'string', pattern: '^CLT-[A-Z0-9]+$' } }],
        responses: { 200: json('The bar', 'BeerClient'), ...errors(401, 404, 503) },
      },
    },
  };
}
