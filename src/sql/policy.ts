// What a guarded SQL tool may do, as data: each agent with a SQL tool describes its own (the recipes
// agent's in src/agents/recipes/sql-policy.ts, the beer agent's analytics in src/agents/beer/sql-policy.ts).

export type StatementKind = 'select' | 'update';

export interface TablePolicy {
  /** a boolean column meaning "deleted": SELECTs never see rows where it is true */
  softDeleteColumn?: string;
  /** boolean columns: comparing or setting them to 1/0 is refused with a hint (a common slip from SQLite) */
  booleanColumns?: readonly string[];
  /** UPDATE may not set these (the database grant says so too; this makes the error clear) */
  immutableColumns?: readonly string[];
}

export interface SqlPolicy {
  /** which statements are allowed at all */
  statements: readonly StatementKind[];
  /** relations that may be named (lower case, schema `schema` or none); everything else is refused */
  tables: Readonly<Record<string, TablePolicy>>;
  /** the schema the relations live in, which a query may name or leave out (default public) */
  schema?: string;
  /** a SELECT returns at most this many rows; a larger LIMIT is lowered to it */
  maxRows: number;
  /** an UPDATE that would change more rows than this is rolled back */
  maxUpdatedRows: number;
  /** the longest query text accepted, in characters */
  maxQueryLength: number;
  /** functions that may be called (lower-case names, schema pg_catalog or none) */
  functions: ReadonlySet<string>;
  /** types that casts may name */
  types: ReadonlySet<string>;
  /** what to say instead of a bare refusal, per refused statement */
  hints: { delete?: string; insert?: string; narrow?: string };
}
