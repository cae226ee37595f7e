// execute_recipe_sql: the model's SQL, through the guard (src/sql/guard.ts) and run as
// brigade_recipes_sql in a savepoint of the runtime's transaction, so the effect of an UPDATE commits
// with the record of the call and a failed query still records its error result.
// Results are the tool's contract JSON: {status, rows, count} | {status, rows_affected, message} | {status, error, query}.
import { guardSql } from '../../sql/guard.ts';
import { executeGuarded } from '../../sql/execute.ts';
import { RECIPES_SQL_POLICY } from './sql-policy.ts';
import type { ToolContext } from '../../activities/tool-context.ts';

export const RECIPES_SQL_ROLE = 'brigade_recipes_sql';

export type RecipeSqlResult =
  | { status: 'success'; rows: Record<string, unknown>[]; count: number; message?: string }
  | { status: 'success'; rows_affected: number; message: string }
  | { status: 'error'; error: string; query: string };

/** `statementTimeoutMs` overrides the setting SQL_STATEMENT_TIMEOUT that the tool otherwise reads from its context. */
export function createExecuteRecipeSql(options: { statementTimeoutMs?: number } = {}) {
  return async (args: { query: string }, context: ToolContext): Promise<RecipeSqlResult> => {
    const query = args.query;
    const guarded = await guardSql(query, RECIPES_SQL_POLICY);
    if (!guarded.ok) return { status: 'error', error: guarded.error, query };
    const result = await executeGuarded(context.db, guarded, {
      role: RECIPES_SQL_ROLE,
      userId: context.userId,
      statementTimeoutMs: options.statementTimeoutMs ?? context.services.config.SQL_STATEMENT_TIMEOUT,
      maxRows: RECIPES_SQL_POLICY.maxRows,
      maxUpdatedRows: RECIPES_SQL_POLICY.maxUpdatedRows,
      narrowHint: RECIPES_SQL_POLICY.hints.narrow,
    });
    if (result.status === 'error') return { status: 'error', error: result.error, query };
    if ('rows' in result) {
      const { rows, count, truncated } = result;
      return truncated
        ? {
            status: 'success',
            rows,
            count,
            message: `Showing the first ${count} rows; there are more. Narrow the query (WHERE, LIMIT) to see others.`,
          }
        : { status: 'success', rows, count };
    }
    const n = result.rows_affected;
    return {
      status: 'success',
      rows_affected: n,
      message: n === 0 ? 'No recipe matched the WHERE clause; nothing was changed.' : 'Changed 1 recipe.',
    };
  };
}
