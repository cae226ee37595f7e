// run_analytical_query_tool: the question becomes SQL through the task model
// (prompts/beer/sql_generation.txt with prompts/beer/customers_schema.txt), code fences are stripped, the guard
// checks it (sql-policy.ts), and it runs as brigade_beer_sql in a READ ONLY transaction of its
// own with statement_timeout, brigade.client_id set to the conversation's client before the role switch.
// Its own transaction, not the runtime's: a read-only query needs nothing from the call's record, and
// a slow one does not hold that transaction open.
//
// Results: { status: 'success', question, sql, rows, count, execution_time_ms, message } or
// { status: 'refused' | 'error', question, sql?, error } — a refusal is a result, never a thrown error.
import { readPrompt } from '../../model/prompts.ts';
import { executeGuardedAlone } from '../../sql/execute.ts';
import { BEER_SCHEMA, BEER_SQL_POLICY, BEER_SQL_ROLE, guardBeerSql } from './sql-policy.ts';
import { CLIENT_SETTING } from './clients-db.ts';
import type { AnalyticalQueryArgs } from './tools.ts';
import type { ToolContext } from '../../activities/tool-context.ts';
import { BudgetSpent, toolCallKey } from '../../activities/usage-meter.ts';
import { NO_CLIENT } from './profile.ts';

export const SQL_GENERATION_TASK = 'sql_generation';

export type AnalyticalResult =
  | {
      status: 'success';
      question: string;
      sql: string;
      rows: Record<string, unknown>[];
      count: number;
      truncated: boolean;
      execution_time_ms: number;
      message: string;
    }
  | { status: 'refused' | 'error'; question: string; sql?: string; error: string };

async function loadPrompts(): Promise<{ template: string; schema: string }> {
  const [template, schema] = await Promise.all([readPrompt('beer', 'sql_generation'), readPrompt('beer', 'customers_schema')]);
  return { template: template.trim(), schema: schema.trim() };
}

/** The SQL generation prompt for one question (one pass, so a question holding "{schema}" stays text). */
export async function sqlGenerationPrompt(question: string, clientId: string): Promise<string> {
  const { template, schema } = await loadPrompts();
  const values: Record<string, string> = {
    schema,
    client_id: clientId,
    question: question.replace(/\s+/g, ' ').trim(),
    max_rows: String(BEER_SQL_POLICY.maxRows),
  };
  return template.replace(/\{(schema|client_id|question|max_rows)\}/g, (_, name: string) => values[name]!);
}

/** The model's SQL without markdown fences or a trailing semicolon. */
export function stripCodeFences(text: string): string {
  let sql = text.trim();
  const fenced = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/.exec(sql);
  if (fenced) sql = fenced[1]!.trim();
  return sql.replace(/;\s*$/, '').trim();
}

export const runAnalyticalQueryTool = async (
  args: AnalyticalQueryArgs,
  context: ToolContext,
): Promise<AnalyticalResult | typeof NO_CLIENT> => {
  if (!context.client) return NO_CLIENT;
  const client = context.client.toUpperCase();
  const question = args.question;
  const { config, taskModel, pool } = context.services;

  let reply;
  try {
    reply = await taskModel.complete({
      charge: { userId: context.userId, conversationId: context.conversationId, key: toolCallKey(context, 'sql') },
      task: SQL_GENERATION_TASK,
      prompt: await sqlGenerationPrompt(question, client),
    });
  } catch (error) {
    // a spent budget is this tool's answer, not a failure to retry
    if (error instanceof BudgetSpent) return { status: 'error', question, error: error.message };
    throw error;
  }
  const sql = stripCodeFences(reply.text);
  if (!sql) return { status: 'error', question, error: 'The model wrote no SQL for this question; rephrase it.' };

  const guarded = await guardBeerSql(sql, client);
  if (!guarded.ok) return { status: 'refused', question, sql, error: guarded.error };

  const started = performance.now();
  const result = await executeGuardedAlone(pool, guarded, {
    role: BEER_SQL_ROLE,
    userId: context.userId,
    statementTimeoutMs: config.SQL_STATEMENT_TIMEOUT,
    maxRows: BEER_SQL_POLICY.maxRows,
    maxUpdatedRows: 0,
    readOnly: true,
    searchPath: BEER_SCHEMA,
    settings: { [CLIENT_SETTING]: client },
  });
  const execution_time_ms = Math.round((performance.now() - started) * 100) / 100;
  if (result.status === 'error') {
    // 42501: the role may not read it; the database refusing is a refusal
    return { status: /permission denied/i.test(result.error) ? 'refused' : 'error', question, sql: guarded.sql, error: result.error };
  }
  if (!('rows' in result)) throw new Error('a read-only query reported changed rows');
  return {
    status: 'success',
    question,
    sql: guarded.sql,
    rows: result.rows,
    count: result.count,
    truncated: result.truncated,
    execution_time_ms,
    message: describeRows(result.rows, result.truncated, usesAggregates(guarded.sql)),
  };
};

const usesAggregates = (sql: string) => /\bsales_by_\w+/i.test(sql);

/** One line for the person (and the offline model's summary): the rows, or why there are none. */
function describeRows(rows: Record<string, unknown>[], truncated: boolean, aggregates: boolean): string {
  if (rows.length === 0) {
    return aggregates
      ? 'No rows. Aggregates only show groups of at least 3 clients, so a state or beer with fewer clients is not shown; try a region (Northeast, Midwest, South, West) or the whole country.'
      : 'No rows: nothing among your own purchases matches.';
  }
  const shown = rows.slice(0, 5).map((row) =>
    Object.entries(row)
      .map(([key, value]) => `${key} ${value === null ? '-' : typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
      .join(', '),
  );
  const more = rows.length > shown.length ? ` (and ${rows.length - shown.length} more)` : '';
  const cut = truncated ? ` Only the first ${rows.length} rows are shown.` : '';
  return `${rows.length} ${rows.length === 1 ? 'row' : 'rows'}: ${shown.join('; ')}${more}.${cut}`;
}
