// Erasure's two steps of crypto-shredding (issue 42): the person's data key goes first, before anything else of
// theirs, so that from then on nothing of theirs still sealed anywhere opens; and last, once their rows are
// deleted, the tables that held them are rewritten so the rows' dead tuples leave the table files.
import { eraseDataKey } from '../db/data-keys.ts';
import { asUser } from '../db/pool.ts';
import { rewritePersonTables } from '../db/table-rewrite.ts';
import type { PersonalDataContext, PersonalDataKind } from './personal-data.ts';
import { forgetPerson } from './person-keys.ts';

async function destroyDataKey({ pool, user }: PersonalDataContext): Promise<number> {
  const gone = await asUser(pool, user, (db) => eraseDataKey(db, user));
  // this process's codecs forget it now; other processes' within DATA_KEY_TTL_MS (60 s)
  forgetPerson(user);
  return gone;
}

/** First of all: the person's data key. */
export const dataKeyKind: PersonalDataKind = {
  name: 'dataKey',
  order: -1000,
  erase: destroyDataKey,
};

/**
 * Last: a data key a payload in flight made while the erasure ran goes too, then the tables are rewritten
 * (ERASURE_REWRITE_TABLES). Counts the tables rewritten.
 */
export const tableFilesKind: PersonalDataKind = {
  name: 'tableFiles',
  order: 1000,
  async erase(ctx) {
    await destroyDataKey(ctx);
    if (ctx.config.ERASURE_REWRITE_TABLES === 'off') return 0;
    const rewritten = await rewritePersonTables(ctx.pool, ctx.log);
    const ms = rewritten.reduce((sum, table) => sum + table.ms, 0);
    ctx.log(`Erasure: rewrote ${rewritten.length} tables in ${Math.round(ms)} ms`);
    return rewritten.length;
  },
};
