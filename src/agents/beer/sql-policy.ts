// The policy for SQL a model writes for the beer agent (run_analytical_query_tool): one SELECT, over the
// schema beer's relations that brigade_beer_sql may read (the client's own rows, through row-level
// security, and the aggregate views), at most 100 rows.
//
// The database decides privacy: whatever the query says, the role sees one client's rows and
// aggregates of at least 3 clients. One check is added here so that an attempt is a clear refusal rather
// than an empty answer: a query that names another client's id (a string constant such as 'CLT-ABC123'
// anywhere in it) is refused before it runs.
import { parseSync } from 'libpg-query';
import { SAFE_FUNCTIONS, SAFE_TYPES } from '../../sql/allow-lists.ts';
import { guardSql, type GuardResult } from '../../sql/guard.ts';
import type { SqlPolicy } from '../../sql/policy.ts';

export const BEER_SQL_ROLE = 'brigade_beer_sql';
export const BEER_SCHEMA = 'beer';

/** Row-level security shows these with the conversation's client's rows only. */
export const BEER_OWN_RELATIONS = ['customers', 'purchases'] as const;
/** No client identity; groups of fewer than 3 clients left out (db/migrations/007_beer.sql). */
export const BEER_AGGREGATE_VIEWS = [
  'sales_by_beer',
  'sales_by_brewery',
  'sales_by_state',
  'sales_by_state_beer',
  'sales_by_region_beer',
  'sales_by_month',
] as const;

export const BEER_SQL_POLICY: SqlPolicy = {
  statements: ['select'],
  schema: BEER_SCHEMA,
  tables: Object.fromEntries([...BEER_OWN_RELATIONS, ...BEER_AGGREGATE_VIEWS].map((name) => [name, {}])),
  maxRows: 100,
  maxUpdatedRows: 0,
  maxQueryLength: 5_000,
  functions: SAFE_FUNCTIONS,
  types: SAFE_TYPES,
  hints: {
    insert: 'The analytical tool only reads: SELECT from the client\'s own data or the sales_by_* aggregates',
    delete: 'The analytical tool only reads: SELECT from the client\'s own data or the sales_by_* aggregates',
  },
};

const CLIENT_ID = /\bCLT-[A-Z0-9]+\b/gi;

/** The guard, then the refusal of a query that names a client other than `clientId`. */
export async function guardBeerSql(sql: string, clientId: string): Promise<GuardResult> {
  const guarded = await guardSql(sql, BEER_SQL_POLICY);
  if (!guarded.ok) return guarded;
  const own = clientId.toUpperCase();
  const others = [...new Set(stringConstants(parseSync(guarded.sql)).flatMap((value) => value.match(CLIENT_ID) ?? []))]
    .map((id) => id.toUpperCase())
    .filter((id) => id !== own);
  if (others.length > 0) {
    return {
      ok: false,
      error:
        `Query refused: it asks for another client's data (${others.join(', ')}). This conversation acts for ${own} and may read ` +
        "only its own purchases; other clients only as aggregates (the sales_by_* views).",
    };
  }
  return guarded;
}

/** Every string constant in a parse tree (after the guard's deparse, so comments are gone). */
function stringConstants(tree: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(walk);
    const constant = (node as { A_Const?: { sval?: { sval?: string } } }).A_Const;
    if (typeof constant?.sval?.sval === 'string') out.push(constant.sval.sval);
    for (const inner of Object.values(node)) walk(inner);
  };
  walk(tree);
  return out;
}
