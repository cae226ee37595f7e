// A worker's ear for Stop (src/db/stop-notice.ts): one LISTEN connection, opened with the first step that
// watches, and each conversation's running steps. A notice that comes before its step starts watching (the
// workflow task was still on its way to the step) is kept a while, so the step stops as soon as it starts.
// The turn's start is the server's time and the Stop's the API's: a Stop that a clock behind the server's
// dates before the turn is not taken here, and reaches the step with the workflow's cancellation instead.
import type pg from 'pg';
import { STOP_CHANNEL, type StopNotice, parseStopNotice } from '../db/stop-notice.ts';

/** How long a notice is kept for a step that has not started watching yet, and how many at most. */
const KEEP_MS = 60_000;
const KEEP_MAX = 10_000;
const RECONNECT_MS = 1_000;

interface Watcher {
  turnStartedAt: number;
  controller: AbortController;
}

export interface StopWatch {
  /** aborts when a Stop for the step's turn comes */
  readonly signal: AbortSignal;
  release(): void;
}

export class StopNotices {
  readonly #pool: pg.Pool;
  readonly #watchers = new Map<string, Set<Watcher>>();
  /** conversation → the Stop's time, and when it was heard (by this clock) */
  readonly #recent = new Map<string, { requestedAt: number; heardAt: number }>();
  #connection: Promise<pg.PoolClient> | undefined;
  #retry: NodeJS.Timeout | undefined;
  /** gives the listening connection back to the pool, once */
  #release: (() => boolean) | undefined;
  #closed = false;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Watches for a Stop of the turn that began at `turnStartedAt` (workflow time) in this conversation. */
  async watch(conversationId: string, turnStartedAt: number): Promise<StopWatch> {
    const controller = new AbortController();
    const watcher: Watcher = { turnStartedAt, controller };
    let set = this.#watchers.get(conversationId);
    if (!set) this.#watchers.set(conversationId, (set = new Set()));
    set.add(watcher);
    const release = () => {
      set.delete(watcher);
      if (!set.size && this.#watchers.get(conversationId) === set) this.#watchers.delete(conversationId);
    };
    // Not listening costs only speed: the workflow's own cancellation still reaches the step.
    await this.#listen().catch(() => undefined);
    const earlier = this.#recent.get(conversationId);
    if (earlier && earlier.requestedAt >= turnStartedAt) controller.abort();
    return { signal: controller.signal, release };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const connection = this.#connection;
    this.#connection = undefined;
    await connection?.catch(() => undefined);
    this.#release?.();
  }

  #heard(notice: StopNotice): void {
    const { conversationId, requestedAt } = notice;
    this.#recent.delete(conversationId);
    const heardAt = Date.now();
    this.#recent.set(conversationId, { requestedAt, heardAt });
    // oldest first: the map keeps the order they were heard in
    for (const [id, kept] of this.#recent) {
      if (this.#recent.size <= KEEP_MAX && kept.heardAt > heardAt - KEEP_MS) break;
      this.#recent.delete(id);
    }
    for (const watcher of this.#watchers.get(conversationId) ?? []) {
      if (watcher.turnStartedAt <= requestedAt) watcher.controller.abort();
    }
  }

  #listen(): Promise<pg.PoolClient> {
    if (this.#closed) return Promise.reject(new Error('closed'));
    this.#connection ??= (async () => {
      const client = await this.#pool.connect();
      // once: a connection that errs as it is closed reports it to both
      let released = false;
      const release = () => {
        if (released) return false;
        released = true;
        client.release(true);
        return true;
      };
      this.#release = release;
      client.on('notification', (message) => {
        const notice = message.channel === STOP_CHANNEL ? parseStopNotice(message.payload ?? '') : undefined;
        if (notice) this.#heard(notice);
      });
      client.on('error', () => {
        if (release()) this.#lost();
      });
      try {
        await client.query(`LISTEN ${STOP_CHANNEL}`);
      } catch (error) {
        release();
        throw error;
      }
      return client;
    })().catch((error: unknown) => {
      this.#connection = undefined;
      throw error;
    });
    return this.#connection;
  }

  #lost(): void {
    this.#connection = undefined;
    if (!this.#closed) this.#retry = setTimeout(() => void this.#listen().catch(() => undefined), RECONNECT_MS).unref();
  }
}
