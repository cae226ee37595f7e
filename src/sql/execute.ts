// Runs SQL that guardSql let through, as the policy's database role, with the user's identity set for
// row-level security and statement_timeout on, inside a savepoint of the caller's transaction (so a
// failed query still lets the caller record its error) or in a transaction of its own.
//
// The order matters: the app sets brigade.user_id and the timeout while it is still brigade_app, then
// switches role. Inside the query only set_config or SET could change them: the guard lets neither
// through, and the roles may not execute set_config anyway (migration 013). Everything is undone afterwards: a SELECT's savepoint is always rolled back, an
// UPDATE's is kept only when it changed at most the allowed number of rows, and the role and settings
// go back to what they were before the savepoint is released.
import pg from 'pg';
import type { GuardResult } from './guard.ts';

type Guarded = Extract<GuardResult, { ok: true }>;

export interface ExecuteOptions {
  /** the role the query runs as (NOLOGIN, only what the tool needs) */
  role: string;
  /** whose rows row-level security shows */
  userId: string;
  statementTimeoutMs: number;
  /** rows a SELECT returns at most */
  maxRows: number;
  /** rows an UPDATE may change at most; more rolls back */
  maxUpdatedRows: number;
  /** how to narrow an UPDATE that changed too many rows, in the tool's words */
  narrowHint?: string;
  /** where unqualified names resolve (the policy's schema; default public) */
  searchPath?: string;
  /** more transaction-local settings that row-level security reads (brigade.client_id), set like brigade.user_id:
   * by the app before the role switch */
  settings?: Readonly<Record<string, string>>;
  /** the largest SELECT result, as JSON characters; larger is an error (it would swamp the transcript) */
  maxResultChars?: number;
}

/** Seals the identity settings made so far in this transaction (only brigade_app may). */
export const SEAL_IDENTITY = "SELECT set_config('brigade.identity_seal', public.brigade_identity_seal(), true)";
const MAX_RESULT_CHARS = 512 * 1024;
const WORK_MEM = '4MB';
const TEMP_FILE_LIMIT = '64MB';
// Rows come from the cursor a few at a time, so a result larger than the cap is cut off after about one
// batch past it instead of being read whole into the worker first.
const FETCH_BATCH = 10;

export type ExecuteResult =
  | { status: 'success'; rows: Record<string, unknown>[]; count: number; truncated: boolean }
  | { status: 'success'; rows_affected: number }
  | { status: 'error'; error: string };

const SAVEPOINT = 'brigade_guarded_sql';
const CURSOR = 'brigade_guarded_cursor';
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** The query's failure as the caller may see it: PostgreSQL's message and hint, no internals. */
export class GuardedQueryError extends Error {}

/** Runs guarded SQL inside the caller's open transaction, in a savepoint. */
export async function executeGuarded(db: pg.ClientBase, guarded: Guarded, options: ExecuteOptions): Promise<ExecuteResult> {
  if (!IDENTIFIER.test(options.role)) throw new Error(`not a role name: ${options.role}`);
  await db.query(`SAVEPOINT ${SAVEPOINT}`);
  let keep = false;
  try {
    // pg_temp last: a temporary table can never stand in for saved_recipes.
    const before = await db.query<{ role: string; timeout: string; search_path: string; work_mem: string; temp_file_limit: string }>(
      "SELECT current_user AS role, current_setting('statement_timeout') AS timeout, current_setting('search_path') AS search_path, " +
        "current_setting('work_mem') AS work_mem, current_setting('temp_file_limit') AS temp_file_limit",
    );
    const { role: previousRole, timeout, search_path, work_mem, temp_file_limit } = before.rows[0]!;
    if (options.searchPath !== undefined && !IDENTIFIER.test(options.searchPath))
      throw new Error(`not a schema name: ${options.searchPath}`);
    // work_mem and temp_file_limit bound what one query may spend on sorts, hashes and spill files
    // (temp_file_limit is a superuser setting: migration 014 lets brigade_app set it).
    await db.query(
      "SELECT set_config('brigade.user_id', $1, true), set_config('statement_timeout', $2, true), set_config('search_path', $3, true), " +
        "set_config('work_mem', $4, true), set_config('temp_file_limit', $5, true)",
      [
        options.userId,
        String(Math.max(1, Math.round(options.statementTimeoutMs))),
        `${options.searchPath ?? 'public'}, pg_temp`,
        WORK_MEM,
        TEMP_FILE_LIMIT,
      ],
    );
    for (const [name, value] of Object.entries(options.settings ?? {})) {
      if (!/^brigade\.[a-z_]+$/.test(name)) throw new Error(`not a brigade setting: ${name}`);
      await db.query('SELECT set_config($1, $2, true)', [name, value]);
    }
    // Last, once every identity setting is made: the model's role sees rows only while they stay as sealed
    // here (migration 016), so a SET that slipped past the guard would show nothing.
    await db.query(SEAL_IDENTITY);
    await db.query(`SET LOCAL ROLE ${options.role}`);

    let result: ExecuteResult;
    if (guarded.kind === 'select') {
      // A cursor reads one row past the limit, so "there were more" is known without reading them all.
      await db.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${guarded.sql}`);
      const limit = options.maxResultChars ?? MAX_RESULT_CHARS;
      const read = await readCursor(db, options.maxRows + 1, limit);
      if (read === 'too large') {
        return {
          status: 'error',
          error: `Query failed: the result is larger than the ${Math.round(limit / 1024)} KB allowed; select fewer columns or rows`,
        };
      }
      const text = JSON.stringify(read.slice(0, options.maxRows));
      // The same tripwire as an UPDATE's: rows read after the query changed its role or a setting that
      // row-level security reads (a set_config that got past the guard) may be someone else's.
      if (!(await sameIdentity(db, options))) {
        return { status: 'error', error: 'Query blocked: it changed the role or the settings it runs with; nothing is returned' };
      }
      const rows = JSON.parse(text) as Record<string, unknown>[];
      result = { status: 'success', rows, count: rows.length, truncated: read.length > options.maxRows };
    } else {
      const updated = await db.query(guarded.sql);
      const changed = updated.rowCount ?? 0;
      if (changed > options.maxUpdatedRows) {
        return {
          status: 'error',
          error:
            `Query blocked: this UPDATE would change ${changed} rows, and an UPDATE may change ${options.maxUpdatedRows} at most. ` +
            `Nothing was changed. ${options.narrowHint ?? 'Narrow the WHERE clause.'}`,
        };
      }
      // A tripwire behind the guard: the query must not have changed who it ran as.
      if (!(await sameIdentity(db, options))) throw new Error('the guarded query changed its role or user; rolled back');
      await db.query(`SET LOCAL ROLE ${quoteIdent(previousRole)}`);
      await db.query(
        "SELECT set_config('statement_timeout', $1, true), set_config('search_path', $2, true), set_config('work_mem', $3, true), " +
          "set_config('temp_file_limit', $4, true)",
        [timeout, search_path, work_mem, temp_file_limit],
      );
      keep = true;
      result = { status: 'success', rows_affected: changed };
    }
    return result;
  } catch (error) {
    if (isDatabaseError(error)) return { status: 'error', error: describeDatabaseError(error, guarded.kind, options.statementTimeoutMs) };
    throw error;
  } finally {
    // Rolling back to the savepoint also undoes SET LOCAL ROLE and the settings made inside it.
    if (keep) await db.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
    else await rollbackToSavepoint(db);
  }
}

/** Up to `maxRows` rows, or 'too large' as soon as the rows read so far pass `maxChars` as JSON. */
async function readCursor(db: pg.ClientBase, maxRows: number, maxChars: number): Promise<Record<string, unknown>[] | 'too large'> {
  const rows: Record<string, unknown>[] = [];
  let chars = 2;
  while (rows.length < maxRows) {
    const count = Math.min(FETCH_BATCH, maxRows - rows.length);
    const batch = await db.query({ text: `FETCH FORWARD ${count} FROM ${CURSOR}`, types: RESULT_TYPES });
    for (const row of batch.rows) {
      chars += JSON.stringify(row).length + 1;
      if (chars > maxChars) return 'too large';
      rows.push(row);
    }
    if (batch.rows.length < count) break;
  }
  return rows;
}

/** Whether the role, the user and the extra settings are still what the app set before the query. */
async function sameIdentity(db: pg.ClientBase, options: ExecuteOptions): Promise<boolean> {
  const expected: Record<string, string> = { 'brigade.user_id': options.userId, ...options.settings };
  const names = Object.keys(expected);
  const { rows } = await db.query<{ role: string; values: (string | null)[] }>(
    'SELECT current_user AS role, array(SELECT current_setting(name, true) FROM unnest($1::text[]) WITH ORDINALITY AS s(name, i) ORDER BY i) AS values',
    [names],
  );
  return rows[0]!.role === options.role && names.every((name, i) => rows[0]!.values[i] === expected[name]);
}

/**
 * A statement_timeout that expires while PostgreSQL is still sending a large result can cancel the
 * next statement instead (the cancel is already pending): that next statement is this rollback, so
 * it is tried again once.
 */
async function rollbackToSavepoint(db: pg.ClientBase): Promise<void> {
  const rollback = `ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`;
  try {
    await db.query(rollback);
  } catch (error) {
    if ((error as { code?: string }).code !== '57014') throw error;
    await db.query(rollback);
  }
}

// A DATE stays the text PostgreSQL sent ('2025-12-29'): as a JavaScript Date it would be local midnight,
// and its JSON would name another day wherever the worker's time zone is not UTC.
const DATE_OID = 1082;
const RESULT_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === DATE_OID ? (value: string) => value : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface DatabaseError {
  code: string;
  message: string;
  hint?: string;
}

function isDatabaseError(error: unknown): error is DatabaseError {
  if (!(error instanceof Error)) return false;
  const { code, severity } = error as unknown as { code?: unknown; severity?: unknown };
  // connection-level failures (08xxx) and shutdowns (57P0x) are for the runtime to retry, not results
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string' && !/^08|^57P/.test(code);
}

/** The message and hint only: no query position, internal query, context or detail about other rows. */
function describeDatabaseError(error: DatabaseError, kind: Guarded['kind'], timeoutMs: number): string {
  if (error.code === '57014') return `Query failed: it ran longer than ${formatMs(timeoutMs)} and was cancelled`;
  // The column hint explains an UPDATE of a column the role may not write; on anything else it would
  // send the model after the wrong cause.
  if (error.code === '42501' && kind === 'update' && /^permission denied for (table|column) /.test(error.message)) {
    return `Query failed: ${error.message} (only the columns a user may change can be updated)`;
  }
  return `Query failed: ${error.message}${error.hint ? ` (${error.hint})` : ''}`;
}

const formatMs = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/**
 * Runs guarded SQL in a transaction of its own on a pooled connection: READ ONLY when the tool only
 * reads (the beer agent's analytics), committed only when it succeeded.
 */
export async function executeGuardedAlone(
  pool: pg.Pool,
  guarded: Guarded,
  options: ExecuteOptions & { readOnly: boolean },
): Promise<ExecuteResult> {
  const client = await pool.connect();
  try {
    await client.query(options.readOnly ? 'BEGIN READ ONLY' : 'BEGIN');
    const result = await executeGuarded(client, guarded, options);
    await client.query(result.status === 'success' && !options.readOnly ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
