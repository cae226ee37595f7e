// Who a beer conversation acts for (issue 8): the token's client, never the model's or the message's.
// A token with a client needs no role (a body naming another client is refused before this). A token
// without one may open a beer conversation only with the beer-staff role, naming the client in the body.
// Either way the client must be one of beer.customers.
import type pg from 'pg';
import { beerClientExists } from './clients-db.ts';
import { BEER_STAFF_ROLE } from './spec.ts';
import type { Principal } from '../../api/auth.ts';
import { HttpError } from '../../api/http-error.ts';


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
    throw new HttpError(400, `client: no client "${client}" in beer.customers`);
  }
}
