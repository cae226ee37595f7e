// Rewrites a checked tree: every SELECT over a soft-deletable table hides its deleted rows, and the
// outermost SELECT's LIMIT is lowered to the policy's row limit (none is added: the executor stops
// reading after that many rows anyway).
//
// How the filter goes in, so that it is right whatever the query says:
// - a table listed straight in FROM gets `AND NOT <alias>.is_deleted` next to the whole WHERE, as one
//   more argument of a top-level AND: `WHERE a OR b` becomes `WHERE (a OR b) AND NOT r.is_deleted`;
// - a table inside a JOIN (where WHERE would turn an outer join into an inner one) or one whose alias
//   renames its columns is replaced by `(SELECT * FROM table WHERE NOT is_deleted) AS <alias>`.
// Subqueries, CTE bodies and set-operation arms are SELECTs of their own and get the same treatment.
import type { SqlPolicy } from './policy.ts';

type Tree = any;

const str = (sval: string): Tree => ({ String: { sval } });
const column = (...names: string[]): Tree => ({ ColumnRef: { fields: names.map(str) } });
const not = (arg: Tree): Tree => ({ BoolExpr: { boolop: 'NOT_EXPR', args: [arg] } });

const nodeType = (node: Tree): string | undefined => {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const keys = Object.keys(node);
  return keys.length === 1 && /^[A-Z]/.test(keys[0]!) ? keys[0] : undefined;
};

function softDeleteColumn(range: Tree, policy: SqlPolicy): string | undefined {
  if (range.catalogname || (range.schemaname && range.schemaname !== (policy.schema ?? 'public'))) return undefined;
  return policy.tables[range.relname]?.softDeleteColumn;
}

/** `(SELECT * FROM table WHERE NOT deleted) AS alias`, standing for the table wherever it was. */
function filteredSubquery(range: Tree, deleted: string): Tree {
  const inner = { ...range, alias: undefined };
  return {
    RangeSubselect: {
      subquery: {
        SelectStmt: {
          targetList: [{ ResTarget: { val: { ColumnRef: { fields: [{ A_Star: {} }] } } } }],
          fromClause: [{ RangeVar: inner }],
          whereClause: not(column(deleted)),
          limitOption: 'LIMIT_OPTION_DEFAULT',
          op: 'SETOP_NONE',
        },
      },
      alias: range.alias ?? { aliasname: range.relname },
    },
  };
}

function rewriteFromItem(item: Tree, policy: SqlPolicy, conditions: Tree[] | undefined): Tree {
  const type = nodeType(item);
  if (type === 'RangeVar') {
    const range = item.RangeVar;
    const deleted = softDeleteColumn(range, policy);
    if (!deleted) return item;
    if (conditions && !range.alias?.colnames) {
      conditions.push(not(column(range.alias?.aliasname ?? range.relname, deleted)));
      return item;
    }
    return filteredSubquery(range, deleted);
  }
  if (type === 'JoinExpr') {
    const join = item.JoinExpr;
    return {
      JoinExpr: {
        ...join,
        larg: rewriteFromItem(join.larg, policy, undefined),
        rarg: rewriteFromItem(join.rarg, policy, undefined),
        quals: rewriteNested(join.quals, policy),
      },
    };
  }
  if (type === 'RangeSubselect') {
    const sub = item.RangeSubselect;
    return { RangeSubselect: { ...sub, subquery: { SelectStmt: rewriteSelect(sub.subquery.SelectStmt, policy, false) } } };
  }
  // functions in FROM: their arguments may hold subqueries
  return rewriteNested(item, policy);
}

/** Rewrites every SELECT nested anywhere in an expression (subqueries in WHERE, in the target list...). */
function rewriteNested(value: Tree, policy: SqlPolicy): Tree {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => rewriteNested(item, policy));
  if (nodeType(value) === 'SelectStmt') return { SelectStmt: rewriteSelect(value.SelectStmt, policy, false) };
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, rewriteNested(inner, policy)]));
}

function rewriteWith(withClause: Tree, policy: SqlPolicy): Tree {
  if (!withClause) return withClause;
  return {
    ...withClause,
    ctes: withClause.ctes.map((cte: Tree) => ({
      CommonTableExpr: {
        ...cte.CommonTableExpr,
        ctequery: { SelectStmt: rewriteSelect(cte.CommonTableExpr.ctequery.SelectStmt, policy, false) },
      },
    })),
  };
}

/** A checked SELECT, rewritten; `outermost` is the statement itself, whose LIMIT is the result's. */
export function rewriteSelect(select: Tree, policy: SqlPolicy, outermost: boolean): Tree {
  const out: Tree = {};
  for (const [key, value] of Object.entries(select)) {
    if (key === 'fromClause' || key === 'withClause' || key === 'larg' || key === 'rarg') continue;
    out[key] = rewriteNested(value, policy);
  }
  if (select.withClause) out.withClause = rewriteWith(select.withClause, policy);
  if (select.larg) out.larg = rewriteSelect(select.larg, policy, false);
  if (select.rarg) out.rarg = rewriteSelect(select.rarg, policy, false);
  if (select.fromClause) {
    const conditions: Tree[] = [];
    out.fromClause = select.fromClause.map((item: Tree) => rewriteFromItem(item, policy, conditions));
    if (conditions.length > 0) {
      const where = out.whereClause ? [out.whereClause, ...conditions] : conditions;
      out.whereClause = where.length === 1 ? where[0] : { BoolExpr: { boolop: 'AND_EXPR', args: where } };
    }
  }
  if (outermost) lowerLimit(out, policy.maxRows);
  return out;
}

function lowerLimit(select: Tree, maxRows: number): void {
  const count = select.limitCount?.A_Const?.ival;
  // an absent ival is LIMIT 0 in the tree's encoding of zero
  if (count && typeof count.ival === 'number' && count.ival > maxRows) {
    select.limitCount = { A_Const: { ival: { ival: maxRows } } };
  }
}

/** A checked UPDATE, rewritten: its target is not filtered (restoring a deleted row must work), its subqueries are. */
export function rewriteUpdate(update: Tree, policy: SqlPolicy): Tree {
  const out: Tree = {};
  for (const [key, value] of Object.entries(update)) {
    out[key] = key === 'withClause' ? rewriteWith(value, policy) : key === 'relation' ? value : rewriteNested(value, policy);
  }
  return out;
}
