// GET /v1/bars: the bars the caller may open a beer conversation for, by name, so the web client offers a
// list rather than a field for a CLT- id: a bar's token sees its own bar, beer staff every bar, anyone
// else is refused (403), as they would be when opening a conversation.
// GET /v1/conversations/:id/bar: the bar a beer conversation acts for, by name, so a person reads
// "Great Lakes Brewing Company" rather than CLT-XLX836. Only the conversation's owner reads it (its client
// was authorized when the conversation was opened: the token's own, or any for beer staff), and it is read
// as that client, so row-level security shows no one else's row. Anything else is a 404.
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { asUser } from '../../db/pool.ts';
import type { OpenApiHelpers } from '../../api/agent-server.ts';
import { principalOf } from '../../api/auth.ts';
import type { ConversationAccess } from '../../api/conversation-access.ts';
import { notFound } from '../../api/http-error.ts';
import { barsScope } from './client-access.ts';
import { barsFor, setBeerClient } from './clients-db.ts';

export const BeerClientView = z.object({
  clientId: z.string(),
  name: z.string(),
  city: z.string().nullable(),
  state: z.string().nullable(),
});

export const BeerBarList = z.object({ bars: z.array(BeerClientView) });

export function beerClientRoutes({ pool, access }: { pool: pg.Pool; access: ConversationAccess }): Router {
  const router = Router();
  // no parameters: whose bars they are is the token's to say, never the request's
  router.get('/bars', async (_req, res) => {
    const principal = principalOf(res);
    const rows = await barsFor(pool, principal.user, barsScope(principal));
    res.json(
      BeerBarList.parse({ bars: rows.map((row) => ({ clientId: row.client_id, name: row.name, city: row.city, state: row.state })) }),
    );
  });
  router.get('/conversations/:id/bar', async (req, res) => {
    // the owner's conversation only, under the rule every conversation route keeps; its client was checked when it was opened
    const { principal, row } = await access.authorizedConversation(res, String(req.params.id));
    const bar = await asUser(pool, principal.user, async (db) => {
      if (row.agent !== 'beer' || !row.client) return undefined;
      await setBeerClient(db, row.client);
      const { rows } = await db.query<{ client_id: string; name: string; city: string | null; state: string | null }>(
        'SELECT client_id, client_name AS name, client_city AS city, client_state AS state FROM beer.customers WHERE client_id = $1',
        [row.client],
      );
      return rows[0];
    });
    if (!bar) throw notFound();
    res.json({ clientId: bar.client_id, name: bar.name, city: bar.city, state: bar.state });
  });
  return router;
}

export function beerClientPaths({ json, errors, idParam }: OpenApiHelpers): Record<string, unknown> {
  return {
    '/v1/bars': {
      get: {
        operationId: 'listBars',
        summary:
          'Beer: the bars (clients) the caller may open a beer conversation for, by name: a token with a client gets its own bar, ' +
          'a token with the beer-staff role and no client every bar; any other token is refused (403). No parameters.',
        responses: { 200: json('The bars, by name', 'BeerBarList'), ...errors(401, 403, 503) },
      },
    },
    '/v1/conversations/{id}/bar': {
      get: {
        operationId: 'getConversationBar',
        summary: 'Beer: the bar (client) this conversation acts for, by name; 404 for a conversation that is not your beer conversation',
        parameters: [idParam],
        responses: { 200: json('The bar', 'BeerClient'), ...errors(401, 403, 404, 503) },
      },
    },
  };
}
