// Who a beer conversation acts for (issue 8): the token's client, never the model's or the message's.
// A token with a client needs no role (a body naming another client is refused before this). A token
// without one may open a beer conversation only with the beer-staff role, naming the client in the body.
// Either way the client must be one of beer.customers.
import type pg from 'pg';
import { beerClientExists } from './clients-db.ts';
import { BEER_STAFF_ROLE } from './spec.ts';
import type { Principal } from '../../api/auth.ts';
import { HttpError, echo } from '../../api/http-error.ts';

export async function requireBeerClient(pool: pg.Pool, principal: Principal, bodyClient: string | undefined): Promise<void> {
  const client = principal.client ?? bodyClient;
  if (!principal.client) {
    if (!principal.roles.includes(BEER_STAFF_ROLE)) {
      throw new HttpError(
        403,
        `A beer conversation acts for the token's client, and this token has none: only the "${BEER_STAFF_ROLE}" role may name a client in the body`,
      );
    }
    if (!bodyClient) {
      throw new HttpError(403, `client: a token without a client must name the client (a bar, CLT-…) to open a beer conversation`);
    }
  }
  if (!(await beerClientExists(pool, principal.user, client!))) {
    // Read by a person in the web client's form, so a sentence that says what to do, not where we looked.
    if (principal.client) {
      throw new HttpError(
        400,
        `The bar this token acts for ("${echo(client!)}") does not exist. Ask whoever gave you the token to correct it.`,
      );
    }
    const message = `No bar with the id "${echo(client!)}". Pick a bar from the list.`;
    throw new HttpError(400, message, { fields: [{ field: 'client', message }] });
  }
}

/**
 * The bars a token may act for, as beer.bars_for takes them: its own client, or every bar (null) for beer
 * staff without one, who may name any bar when they open a conversation. Anyone else may act for none.
 */
export function barsScope(principal: Principal): string | null {
  if (principal.client) return principal.client;
  if (principal.roles.includes(BEER_STAFF_ROLE)) return null;
  throw new HttpError(403, `This token has no bar (client) of its own, and only the "${BEER_STAFF_ROLE}" role may act for any bar`);
}
