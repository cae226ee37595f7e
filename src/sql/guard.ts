// The guard for SQL that a model writes: parse with PostgreSQL's own parser (libpg-query), walk every
// node of the tree, refuse what the policy does not allow, rewrite what it says to rewrite, and deparse.
// Comments, quoting and casing are gone after parsing, so they change nothing here. The walk visits
// every node: subqueries, CTEs, set-operation arms, function calls wherever they sit. What it does not
// know is refused, so a construct PostgreSQL adds later stays out until someone allows it.
import { loadModule, parseSync } from 'libpg-query';
import { deparseSync } from 'pgsql-deparser';
import { isStorableText } from '../shared/safe-text.ts';
import type { SqlPolicy, StatementKind, TablePolicy } from './policy.ts';
import { rewriteSelect, rewriteUpdate } from './rewrite.ts';

export type GuardResult = { ok: true; sql: string; kind: StatementKind } | { ok: false; error: string };

// The parse tree is JSON whose shape depends on the node; typed loosely on purpose.
type Tree = any;

class Refusal extends Error {}

const refuse = (message: string): never => {
  throw new Refusal(message);
};

const BLOCKED = 'Query blocked: ';

// A query a person would write nests a few dozen levels in the parse tree (each SQL level is several
// JSON levels: a BoolExpr, its args list, the next node). 2,400 nested NOTs or 700 nested subselects
// would overflow the recursive walks below (and the deparser's) long before this.
export const MAX_TREE_DEPTH = 150;
// Type modifiers size values: 'x'::char(10485760) is a 10 MB value from a 1-character literal.
export const MAX_TYPE_MODIFIER = 1_000;
// How much larger than its inputs a value may grow through replace() and regexp_replace(), the product
// over the whole statement: each call multiplies what passes through it by at most its factor (see
// growthFactor), so no path through the query grows a value more than this. With inputs bounded by the
// largest column (100 KB) or the query itself, a value stays under 10 MB, which PostgreSQL builds in
// well under a second; nested replaces of a long literal (the string bomb) are refused.
export const MAX_GROWTH = 100;

/** The running product of growth factors of the statement being checked (the guard is synchronous). */
let growth = 1;

let loaded: Promise<void> | undefined;

/** Loads the parser's WebAssembly once; guardSql awaits it, guardSqlSync needs it done. */
export function loadSqlParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

/** Parses, checks and rewrites one query; the result's sql is what may run, under the policy's role. */
export async function guardSql(sql: string, policy: SqlPolicy): Promise<GuardResult> {
  await loadSqlParser();
  return guardSqlSync(sql, policy);
}

export function guardSqlSync(sql: string, policy: SqlPolicy): GuardResult {
  try {
    if (sql.length > policy.maxQueryLength) refuse(`the query is longer than ${policy.maxQueryLength} characters`);
    if (!isStorableText(sql)) refuse('the query contains a NUL character or an unpaired surrogate, which PostgreSQL cannot take');
    if (sql.trim() === '') refuse('the query is empty');
    const statement = parseOne(sql);
    checkDepth(statement);
    const kind = checkStatement(statement, policy);
    const rewritten = kind === 'select' ? rewriteSelect(statement.SelectStmt, policy, true) : rewriteUpdate(statement.UpdateStmt, policy);
    const out = deparseSync(kind === 'select' ? { SelectStmt: rewritten } : { UpdateStmt: rewritten }, { pretty: false });
    // The deparser is a second program between the check and the database: what it wrote must pass the
    // same check, so a deparser slip can make a query fail, never make it more powerful.
    const again = checkStatement(parseOne(out), policy);
    if (again !== kind) refuse('the rewritten query changed kind');
    return { ok: true, sql: out, kind };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, error: BLOCKED + error.message };
    if (isParseError(error)) return { ok: false, error: `Query blocked: it does not parse as PostgreSQL: ${(error as Error).message}` };
    // A shape the depth check let through can still exhaust a stack (the parser's or the deparser's): it
    // is the query's fault, so it is the tool's answer, never a failure Temporal would retry.
    if (error instanceof RangeError) return { ok: false, error: BLOCKED + 'the query is nested too deeply; simplify it' };
    throw error;
  }
}

function isParseError(error: unknown): boolean {
  return error instanceof Error && error.constructor.name === 'SqlError';
}

/** Measured without recursion, so that measuring cannot overflow either. */
function checkDepth(tree: Tree): void {
  const stack: [Tree, number][] = [[tree, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_TREE_DEPTH) {
      refuse(
        `the query nests more than ${MAX_TREE_DEPTH} levels deep in its parse tree; simplify it (fewer nested subqueries, NOTs or parentheses)`,
      );
    }
    for (const inner of Object.values(node)) {
      if (inner !== null && typeof inner === 'object') stack.push([inner, depth + 1]);
    }
  }
}

function parseOne(sql: string): Tree {
  const statements: Tree[] = parseSync(sql).stmts ?? [];
  if (statements.length === 0) refuse('the query is empty');
  if (statements.length > 1) refuse(`send one statement at a time (found ${statements.length})`);
  return statements[0].stmt;
}

// ---------------------------------------------------------------------------------------------
// Checks

const STATEMENT_WORDS: Record<string, string> = {
  DeleteStmt: 'DELETE',
  InsertStmt: 'INSERT',
  MergeStmt: 'MERGE',
  DropStmt: 'DROP',
  TruncateStmt: 'TRUNCATE',
  CreateStmt: 'CREATE TABLE',
  CreateTableAsStmt: 'CREATE TABLE AS',
  ViewStmt: 'CREATE VIEW',
  IndexStmt: 'CREATE INDEX',
  CreateFunctionStmt: 'CREATE FUNCTION',
  CreateRoleStmt: 'CREATE ROLE',
  CreateSchemaStmt: 'CREATE SCHEMA',
  CreateExtensionStmt: 'CREATE EXTENSION',
  AlterTableStmt: 'ALTER',
  AlterRoleStmt: 'ALTER ROLE',
  RenameStmt: 'ALTER ... RENAME',
  GrantStmt: 'GRANT/REVOKE',
  GrantRoleStmt: 'GRANT/REVOKE',
  CopyStmt: 'COPY',
  VariableSetStmt: 'SET',
  VariableShowStmt: 'SHOW',
  TransactionStmt: 'transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT)',
  ExplainStmt: 'EXPLAIN',
  DoStmt: 'DO',
  CallStmt: 'CALL',
  LockStmt: 'LOCK',
  PrepareStmt: 'PREPARE',
  ExecuteStmt: 'EXECUTE',
  DeallocateStmt: 'DEALLOCATE',
  DeclareCursorStmt: 'DECLARE CURSOR',
  FetchStmt: 'FETCH',
  ListenStmt: 'LISTEN',
  NotifyStmt: 'NOTIFY',
  VacuumStmt: 'VACUUM/ANALYZE',
  LoadStmt: 'LOAD',
  DiscardStmt: 'DISCARD',
  CheckPointStmt: 'CHECKPOINT',
  ReindexStmt: 'REINDEX',
  ClusterStmt: 'CLUSTER',
  CommentStmt: 'COMMENT',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  CreateTrigStmt: 'CREATE TRIGGER',
  RuleStmt: 'CREATE RULE',
  AlterSystemStmt: 'ALTER SYSTEM',
  SecLabelStmt: 'SECURITY LABEL',
  ReassignOwnedStmt: 'REASSIGN OWNED',
  DropOwnedStmt: 'DROP OWNED',
  CreatedbStmt: 'CREATE DATABASE',
  DropdbStmt: 'DROP DATABASE',
};

const nodeType = (node: Tree): string | undefined => {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const keys = Object.keys(node);
  return keys.length === 1 && /^[A-Z]/.test(keys[0]!) ? keys[0] : undefined;
};

const allowedList = (policy: SqlPolicy) => {
  const tables = Object.keys(policy.tables).join(', ');
  const kinds = policy.statements.map((kind) => kind.toUpperCase());
  return `only ${kinds.join(' and ')} on ${tables} ${kinds.length === 1 ? 'is' : 'are'} allowed`;
};

function checkStatement(statement: Tree, policy: SqlPolicy): StatementKind {
  growth = 1;
  const type = nodeType(statement);
  if (type === 'SelectStmt' && policy.statements.includes('select')) {
    checkSelect(statement.SelectStmt, policy, new Set());
    return 'select';
  }
  if (type === 'UpdateStmt' && policy.statements.includes('update')) {
    checkUpdate(statement.UpdateStmt, policy);
    return 'update';
  }
  const word = STATEMENT_WORDS[type ?? ''] ?? (type ? type.replace(/Stmt$/, '').toUpperCase() : 'this statement');
  const hint = type === 'DeleteStmt' ? policy.hints.delete : type === 'InsertStmt' ? policy.hints.insert : undefined;
  if (hint) return refuse(`${word} is not allowed. ${hint}`);
  if (type === 'CreateTableAsStmt') return refuse('CREATE TABLE AS / SELECT INTO creates a table; ' + allowedList(policy));
  return refuse(`${word} is not allowed; ${allowedList(policy)}`);
}

/** CTE names visible at a point of the tree: a name that is not one of these must be an allowed table. */
type Scope = ReadonlySet<string>;

function checkWith(withClause: Tree, policy: SqlPolicy, scope: Scope): Scope {
  if (!withClause) return scope;
  // A recursive query can double a value at every iteration, within one row's evaluation of memory.
  if (withClause.recursive) refuse('WITH RECURSIVE is not allowed; write the query without recursion');
  const ctes: Tree[] = withClause.ctes ?? [];
  const names = ctes.map((cte) => cte.CommonTableExpr.ctename as string);
  for (const name of names) {
    if (policy.tables[name]) refuse(`a WITH query may not be named ${name}, like the table`);
  }
  const all = new Set([...scope, ...names]);
  let visible = new Set(scope);
  for (const cte of ctes) {
    const body = cte.CommonTableExpr;
    const queryType = nodeType(body.ctequery);
    if (queryType !== 'SelectStmt') {
      refuse(`a WITH query may only SELECT (found ${STATEMENT_WORDS[queryType ?? ''] ?? queryType}); writing CTEs are not allowed`);
    }
    if (body.search_clause || body.cycle_clause) refuse('SEARCH and CYCLE clauses are not supported');
    // A recursive WITH sees all its names; otherwise a query sees the ones before it.
    checkSelect(body.ctequery.SelectStmt, policy, withClause.recursive ? all : visible);
    visible = new Set([...visible, body.ctename]);
  }
  return all;
}

function checkSelect(select: Tree, policy: SqlPolicy, outer: Scope): void {
  if (select.intoClause) refuse('SELECT INTO creates a table; ' + allowedList(policy));
  if (select.lockingClause) refuse('locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed: a query may not lock rows');
  const scope = checkWith(select.withClause, policy, outer);
  if (select.op && select.op !== 'SETOP_NONE') {
    checkSelect(select.larg, policy, scope);
    checkSelect(select.rarg, policy, scope);
  }
  for (const item of select.fromClause ?? []) checkFromItem(item, policy, scope);
  for (const [key, value] of Object.entries(select)) {
    if (['fromClause', 'withClause', 'larg', 'rarg', 'intoClause', 'lockingClause'].includes(key)) continue;
    checkExpression(value, policy, scope);
  }
  if (select.limitCount) checkLimit(select.limitCount);
}

function checkLimit(limit: Tree): void {
  const constant = limit.A_Const;
  if (constant && (constant.isnull || constant.ival !== undefined)) return;
  refuse('LIMIT must be a whole number');
}

function checkRelation(range: Tree, policy: SqlPolicy, scope: Scope): TablePolicy | undefined {
  const name: string = range.relname;
  if (!range.schemaname && !range.catalogname && scope.has(name)) return undefined;
  const table = policy.tables[name];
  const qualified = [range.catalogname, range.schemaname, name].filter(Boolean).join('.');
  if (!table || range.catalogname || (range.schemaname && range.schemaname !== (policy.schema ?? 'public'))) {
    refuse(`${qualified} may not be queried; ${allowedList(policy)}`);
  }
  return table;
}

function checkFromItem(item: Tree, policy: SqlPolicy, scope: Scope): void {
  const type = nodeType(item);
  const body = type ? item[type] : undefined;
  switch (type) {
    case 'RangeVar':
      checkRelation(body, policy, scope);
      checkAlias(body.alias);
      return;
    case 'RangeSubselect':
      if (nodeType(body.subquery) !== 'SelectStmt') refuse('a subquery in FROM may only SELECT');
      checkSelect(body.subquery.SelectStmt, policy, scope);
      checkAlias(body.alias);
      return;
    case 'JoinExpr':
      checkFromItem(body.larg, policy, scope);
      checkFromItem(body.rarg, policy, scope);
      checkExpression(body.quals, policy, scope);
      checkAlias(body.alias);
      return;
    case 'RangeFunction':
      if (body.coldeflist) refuse('column definition lists on functions are not supported');
      for (const entry of body.functions ?? []) {
        // each entry is a List of [function call, column definitions]
        const [call, definitions] = entry.List?.items ?? [];
        if (nodeType(call) !== 'FuncCall') refuse('only function calls may appear as functions in FROM');
        if (definitions && Object.keys(definitions).length > 0) refuse('column definition lists on functions are not supported');
        checkExpression(call, policy, scope);
      }
      checkAlias(body.alias);
      return;
    default:
      refuse(`${describeNode(type)} in FROM is not supported`);
  }
}

function checkAlias(alias: Tree): void {
  for (const column of alias?.colnames ?? []) if (nodeType(column) !== 'String') refuse('malformed alias');
}

// Expression nodes that do nothing beyond computing a value from their children.
const PLAIN_NODES = new Set([
  'ResTarget',
  'ColumnRef',
  'A_Star',
  'A_Const',
  'BoolExpr',
  'NullTest',
  'BooleanTest',
  'SortBy',
  'CaseExpr',
  'CaseWhen',
  'CoalesceExpr',
  'MinMaxExpr',
  'A_Indirection',
  'A_Indices',
  'A_ArrayExpr',
  'RowExpr',
  'String',
  'Integer',
  'Float',
  'Boolean',
  'List',
  'WindowDef',
  'CollateClause',
  'GroupingSet',
  'SetToDefault',
  'MultiAssignRef',
  'NamedArgExpr',
]);

const SAFE_SQL_VALUE_FUNCTIONS = new Set([
  'SVFOP_CURRENT_DATE',
  'SVFOP_CURRENT_TIME',
  'SVFOP_CURRENT_TIME_N',
  'SVFOP_CURRENT_TIMESTAMP',
  'SVFOP_CURRENT_TIMESTAMP_N',
  'SVFOP_LOCALTIME',
  'SVFOP_LOCALTIME_N',
  'SVFOP_LOCALTIMESTAMP',
  'SVFOP_LOCALTIMESTAMP_N',
]);

const describeNode = (type: string | undefined): string =>
  ({
    RangeTableSample: 'TABLESAMPLE',
    RangeTableFunc: 'XMLTABLE',
    JsonTable: 'JSON_TABLE',
    XmlExpr: 'XML functions',
    XmlSerialize: 'XMLSERIALIZE',
    ParamRef: 'a parameter ($1)',
    CurrentOfExpr: 'WHERE CURRENT OF',
    SQLValueFunction: 'this SQL value function',
  })[type ?? ''] ??
  type ??
  'this construct';

/** Walks any part of a statement that holds expressions; every node met is checked. */
function checkExpression(value: Tree, policy: SqlPolicy, scope: Scope): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) checkExpression(item, policy, scope);
    return;
  }
  const type = nodeType(value);
  if (!type) {
    // an inline struct (an alias, a type name, a window): its fields are walked like any others
    for (const inner of Object.values(value)) checkExpression(inner, policy, scope);
    return;
  }
  const body = value[type];
  switch (type) {
    case 'FuncCall':
      checkFunction(body.funcname, policy);
      checkGrowth(body);
      break;
    case 'TypeCast':
      checkType(body.typeName, policy);
      checkExpression(body.arg, policy, scope);
      return;
    case 'A_Expr':
      checkOperator(body, policy);
      break;
    case 'SubLink':
      if (nodeType(body.subselect) !== 'SelectStmt') refuse('a subquery may only SELECT');
      checkSelect(body.subselect.SelectStmt, policy, scope);
      checkExpression(body.testexpr, policy, scope);
      checkExpression(body.operName, policy, scope);
      return;
    case 'SelectStmt':
      checkSelect(body, policy, scope);
      return;
    case 'SQLValueFunction':
      if (!SAFE_SQL_VALUE_FUNCTIONS.has(body.op)) refuse(`${body.op.replace('SVFOP_', '')} is not allowed`);
      return;
    default:
      if (!PLAIN_NODES.has(type)) refuse(`${describeNode(type)} is not allowed`);
  }
  for (const inner of Object.values(body)) checkExpression(inner, policy, scope);
}

const strings = (list: Tree[] | undefined): string[] => (list ?? []).map((item) => item.String?.sval ?? '');

function checkFunction(funcname: Tree[], policy: SqlPolicy): void {
  const parts = strings(funcname);
  const name = parts.at(-1) ?? '';
  const schema = parts.length > 1 ? parts.slice(0, -1).join('.') : undefined;
  if ((schema !== undefined && schema !== 'pg_catalog') || !policy.functions.has(name)) {
    refuse(`the function ${parts.join('.')}() is not allowed`);
  }
}

function checkType(typeName: Tree, policy: SqlPolicy): void {
  const parts = strings(typeName?.names);
  const name = parts.at(-1) ?? '';
  const schema = parts.length > 1 ? parts.slice(0, -1).join('.') : undefined;
  if (typeName?.pct_type || (schema !== undefined && schema !== 'pg_catalog') || !policy.types.has(name)) {
    refuse(`casting to ${parts.join('.') || 'this type'} is not allowed`);
  }
  for (const modifier of typeName.typmods ?? []) {
    if (nodeType(modifier) !== 'A_Const') refuse('type modifiers must be constants');
    const size = modifier.A_Const.ival?.ival ?? 0;
    if (typeof size === 'number' && size > MAX_TYPE_MODIFIER) {
      refuse(`the type modifier (${size}) of ${name} is larger than ${MAX_TYPE_MODIFIER}; cast to text instead`);
    }
  }
}

const GROWING = new Set(['replace', 'regexp_replace']);

/**
 * replace(s, from, to) makes s at most ceil(len(to) / len(from)) times longer; regexp_replace(s, pattern,
 * to) at most len(to) + 1 times (a pattern may match the empty string between every two characters).
 * The replacement must be a literal, so that the factor is known before the query runs.
 */
function checkGrowth(call: Tree): void {
  const name = strings(call.funcname).at(-1) ?? '';
  if (!GROWING.has(name)) return;
  const args: Tree[] = call.args ?? [];
  const literal = (node: Tree): string | undefined => node?.A_Const?.sval?.sval ?? (node?.A_Const?.isnull ? '' : undefined);
  const to = literal(args[2]);
  if (to === undefined)
    refuse(`${name}() takes a literal replacement here (a string in quotes), so that how much it can grow a value is known`);
  let factor: number;
  if (name === 'replace') {
    const from = literal(args[1]);
    if (from === undefined) refuse('replace() takes a literal search string here (a string in quotes)');
    factor = Math.max(1, Math.ceil(to!.length / Math.max(1, from!.length)));
  } else {
    factor = to!.length + 1;
  }
  growth *= factor;
  if (growth > MAX_GROWTH) {
    refuse(
      `its replace() and regexp_replace() calls could make a value ${growth} times larger than its input, more than the ${MAX_GROWTH} allowed; use shorter replacements or fewer nested calls`,
    );
  }
}

function checkOperator(expr: Tree, policy: SqlPolicy): void {
  const parts = strings(expr.name);
  if (parts.length > 1 && parts.slice(0, -1).join('.') !== 'pg_catalog') refuse(`the operator ${parts.join('.')} is not allowed`);
  // is_deleted = 1: SQLite habits give PostgreSQL a boolean compared with an integer
  if (expr.kind === 'AEXPR_OP' && ['=', '<>', '!='].includes(parts.at(-1) ?? '')) {
    const column = booleanColumn(expr.lexpr, policy) ?? booleanColumn(expr.rexpr, policy);
    if (column && (isIntegerConstant(expr.lexpr) || isIntegerConstant(expr.rexpr))) {
      refuse(`${column} is a boolean in PostgreSQL: compare it with true or false, not 1 or 0`);
    }
  }
}

const isIntegerConstant = (node: Tree): boolean => node?.A_Const?.ival !== undefined;

function booleanColumn(node: Tree, policy: SqlPolicy): string | undefined {
  const name = strings(node?.ColumnRef?.fields).at(-1);
  if (!name) return undefined;
  return Object.values(policy.tables).some((table) => table.booleanColumns?.includes(name)) ? name : undefined;
}

function checkUpdate(update: Tree, policy: SqlPolicy): void {
  const scope = checkWith(update.withClause, policy, new Set());
  const table = checkRelation(update.relation, policy, new Set());
  if (!table) refuse('UPDATE must name a table');
  if (!update.whereClause) {
    refuse(`UPDATE needs a WHERE clause that picks the row, for example UPDATE ${update.relation.relname} SET ... WHERE id = '<id>'`);
  }
  if (update.fromClause) refuse('UPDATE ... FROM is not supported; use a subquery in WHERE');
  if (update.returningClause || update.returningList) refuse('UPDATE ... RETURNING is not supported; SELECT the row after updating it');
  if (nodeType(update.whereClause) === 'CurrentOfExpr') refuse('WHERE CURRENT OF is not supported');
  for (const target of update.targetList ?? []) {
    const column: string = target.ResTarget.name;
    if (table!.immutableColumns?.includes(column)) {
      refuse(`${column} cannot be changed (${table!.immutableColumns.join(', ')} never change)`);
    }
    if (table!.booleanColumns?.includes(column) && isIntegerConstant(target.ResTarget.val)) {
      refuse(`${column} is a boolean in PostgreSQL: set it to true or false, not 1 or 0`);
    }
  }
  checkExpression(update.targetList, policy, scope);
  checkExpression(update.whereClause, policy, scope);
}
