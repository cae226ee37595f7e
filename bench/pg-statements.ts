// What PostgreSQL does per turn, from pg_stat_statements: the bench's embedded server preloads it, and a
// snapshot before and after a run gives each statement's calls and time per turn.
import { withClient } from '../src/db/with-client.ts';

export interface StatementUse {
  query: string;
  /** sent by a client (a round trip), not run inside a function */
  toplevel: boolean;
  calls: number;
  ms: number;
  rows: number;
}

export type StatementSnapshot = Map<string, StatementUse>;

/** Creates the extension (as the login that owns the database); false when the server did not preload it. */
export function enableStatementStats(url: string): Promise<boolean> {
  return withClient(url, async (client) => {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
    return true;
  }).catch(() => false);
}

export function statementSnapshot(url: string): Promise<StatementSnapshot | undefined> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ key: string; query: string; toplevel: boolean; calls: string; ms: number; rows: string }>(
      `SELECT queryid::text || ':' || toplevel AS key, query, toplevel, calls::text, total_exec_time AS ms, rows::text FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return new Map(
      rows.map((row) => [
        row.key,
        { query: row.query, toplevel: row.toplevel, calls: Number(row.calls), ms: Number(row.ms), rows: Number(row.rows) },
      ]),
    );
  }).catch(() => undefined);
}

/** The statements run between two snapshots, per turn, busiest first. */
export function statementsBetween(
  before: StatementSnapshot | undefined,
  after: StatementSnapshot | undefined,
  turns: number,
): StatementUse[] {
  if (!before || !after || turns <= 0) return [];
  const used: StatementUse[] = [];
  for (const [id, now] of after) {
    const was = before.get(id);
    const calls = now.calls - (was?.calls ?? 0);
    if (calls <= 0) continue;
    used.push({
      query: now.query,
      toplevel: now.toplevel,
      calls: calls / turns,
      ms: (now.ms - (was?.ms ?? 0)) / turns,
      rows: (now.rows - (was?.rows ?? 0)) / turns,
    });
  }
  return used.sort((a, b) => b.ms - a.ms);
}
