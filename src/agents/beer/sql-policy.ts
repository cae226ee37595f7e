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
import { normalizeClientId } from '../../shared/client-id.ts';

export const BEER_SQL_ROLE = 'brigade_beer_sql';
export const BEER_SCHEMA = 'beer';

/** Row-level security shows these with the conversation's client's rows only. */
export const BEER_OWN_RELATIONS = ['customers', 'purchases'] as const;
/** No client identity; every cell k+ clients other than the asking one, and no cell recoverable by difference (src/agents/beer/migrations/017_beer_published_aggregates.sql). */
export const BEER_AGGREGATE_VIEWS = [
  'sales_by_beer',
  'sales_by_brewery',
  'sales_by_state',
  'sales_by_state_beer',
  'sales_by_region',
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
    insert: "The analytical tool only reads: SELECT from the client's own data or the sales_by_* aggregates",
    delete: "The analytical tool only reads: SELECT from the client's own data or the sales_by_* aggregates",
  },
};

// After normalization (src/shared/client-id.ts) and with separators dropped, so that 'clt-' || 'cir922',
// concat('CLT', '-', 'CIR922') and ' clt-cir922 ' are all the same id.
const CLIENT_ID = /CLT[A-Z0-9]{6}/g;
const compact = (text: string) => normalizeClientId(text).replace(/[\s\-_]+/g, '');

/** The guard, then the refusal of a query that names a client other than `clientId`. */
export async function guardBeerSql(sql: string, clientId: string): Promise<GuardResult> {
  const guarded = await guardSql(sql, BEER_SQL_POLICY);
  if (!guarded.ok) return guarded;
  const own = normalizeClientId(clientId);
  const others = [...new Set(stringValues(parseSync(guarded.sql)).flatMap((value) => compact(value).match(CLIENT_ID) ?? []))]
    .map((id) => `${id.slice(0, 3)}-${id.slice(3)}`)
    .filter((id) => id !== own);
  if (others.length > 0) {
    return {
      ok: false,
      error:
        `Query refused: it asks for another client's data (${others.join(', ')}). This conversation acts for ${own} and may read ` +
        'only its own purchases; other clients only as aggregates (the sales_by_* views).',
    };
  }
  return guarded;
}

// Functions whose text result is made of their arguments' text, so a constant built with them is folded.
const TEXT_JOINERS = new Set(['concat', 'concat_ws', 'upper', 'lower', 'btrim', 'ltrim', 'rtrim', 'trim', 'text', 'format']);

type Node = Record<string, unknown>;
const nameOf = (names: unknown): string =>
  Array.isArray(names) ? String((names.at(-1) as { String?: { sval?: string } })?.String?.sval ?? '') : '';

/**
 * The text a constant expression spells, as far as it can be told without running it: a string constant,
 * a cast of one, `a || b` of two, or a text function of constants (joined: the case and trim functions do not
 * change which id it is, since ids are compared normalized). Undefined for anything that reads data.
 */
function foldText(node: unknown): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as Node;
  const constant = n.A_Const as { sval?: { sval?: string }; ival?: { ival?: number } } | undefined;
  if (constant) return constant.sval?.sval ?? (constant.ival ? String(constant.ival.ival ?? 0) : undefined);
  const cast = n.TypeCast as { arg?: unknown } | undefined;
  if (cast) return foldText(cast.arg);
  const expr = n.A_Expr as { name?: unknown; lexpr?: unknown; rexpr?: unknown } | undefined;
  if (expr && nameOf(expr.name) === '||') {
    const left = foldText(expr.lexpr);
    const right = foldText(expr.rexpr);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  const call = n.FuncCall as { funcname?: unknown; args?: unknown[] } | undefined;
  if (call && TEXT_JOINERS.has(nameOf(call.funcname).toLowerCase())) {
    const parts = (call.args ?? []).map(foldText);
    return parts.every((part) => part !== undefined) ? parts.join('') : undefined;
  }
  return undefined;
}

/** Every string constant in a parse tree, and every text that a constant expression in it folds to. */
function stringValues(tree: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(walk);
    const folded = foldText(node);
    if (folded !== undefined) out.push(folded);
    for (const inner of Object.values(node)) walk(inner);
  };
  walk(tree);
  return out;
}
