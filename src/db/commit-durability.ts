// Deferred commits: a model step commits several times (the user's message, the model's call, an inline
// tool's transaction, streamed text) before the write its activity's result depends on. PostgreSQL's log is
// one sequence, so the durable commit of a step's last write flushes every earlier commit of the step with
// it: those may commit with synchronous_commit off and not wait on a disk flush each, and the step is as
// durable when its activity completes as if each had waited. A step that ends without a durable write
// flushes the log itself (`settle`). What is given up: a PostgreSQL crash within the WAL writer's delay
// (200 ms) of a deferred commit can lose rows a reader already saw, which the activity's retry writes again
// (every write is keyed by step, call and chunk; docs/performance.md).
import type pg from 'pg';

/** appended to a statement's select list: its own transaction commits without waiting for the flush */
export const DEFER_COMMIT_SQL = "set_config('synchronous_commit', 'off', true)";

// PostgreSQL 17 added the flush argument; before it there is no flush a role like brigade_app may ask for,
// so on older servers nothing is deferred and every commit waits as it always did.
const FLUSH = { name: 'brigade.flush_wal', text: "SELECT pg_logical_emit_message(false, 'brigade', 'flush', true)" };
const FLUSHABLE_SINCE = 170_000;

const support = new WeakMap<pg.Pool, Promise<boolean>>();

function canDefer(pool: pg.Pool): Promise<boolean> {
  let known = support.get(pool);
  if (!known) {
    known = pool
      .query<{ version: number }>("SELECT current_setting('server_version_num')::int AS version")
      .then(({ rows }) => rows[0]!.version >= FLUSHABLE_SINCE)
      .catch((error: unknown) => {
        support.delete(pool);
        throw error;
      });
    support.set(pool, known);
  }
  return known;
}

/** The commits of one activity: which may be deferred, and whether one is still waiting for a flush. */
export class StepCommits {
  readonly #pool: pg.Pool;
  #owed = false;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Whether the next write may commit deferred (a later durable write or `settle` is promised). */
  async defer(): Promise<boolean> {
    const deferred = await canDefer(this.#pool);
    if (deferred) this.#owed = true;
    return deferred;
  }

  /** A write committed durably: it flushed everything deferred before it. */
  flushed(): void {
    this.#owed = false;
  }

  /** Makes every deferred commit of the step durable, if one is owed; called before the activity completes. */
  async settle(): Promise<void> {
    if (!this.#owed) return;
    await this.#pool.query(FLUSH);
    this.#owed = false;
  }
}
