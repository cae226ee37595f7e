import type pg from 'pg';
import { LIVE_DELTA_CHANNEL, type LiveDelta, parseLiveDelta } from '../db/live-deltas.ts';

/** What a conversation's event stream is told: its table has new rows, or a live delta came. */
export interface EventListener {
  /** `upTo`: the newest event id the wake-up is for (absent after a reconnect: read whatever there is) */
  wake(upTo?: number): void;
  delta(delta: LiveDelta): void;
}

const EVENTS_CHANNEL = 'brigade_events';
const RECONNECT_MS = 1_000;

/**
 * One LISTEN connection per API process, on two channels: `brigade_events` (its payload names a conversation
 * whose events table got rows) wakes that conversation's streams to read the table; `brigade_deltas` carries a
 * live delta, handed to the conversation's streams as it is, with no read. It holds a pool client only while
 * someone is subscribed, and reconnects while someone is.
 */
export class EventNotifier {
  private readonly pool: pg.Pool;
  private readonly listeners = new Map<string, Set<EventListener>>();
  private client: Promise<pg.PoolClient> | undefined;
  /** the connection that listens, once it does */
  private current: pg.PoolClient | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** set when the connection died: notifications may have been missed */
  private missed = false;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async subscribe(conversationId: string, listener: EventListener): Promise<() => void> {
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    const unsubscribe = () => {
      set.delete(listener);
      if (!set.size && this.listeners.get(conversationId) === set) this.listeners.delete(conversationId);
      if (!this.listeners.size) void this.disconnect();
    };
    try {
      await this.connect();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  private onNotification(message: pg.Notification): void {
    if (message.channel === LIVE_DELTA_CHANNEL) {
      const delta = parseLiveDelta(message.payload ?? '');
      if (!delta) return;
      for (const listener of this.listeners.get(delta.conversationId) ?? []) listener.delta(delta);
      return;
    }
    // "<conversation>:<newest event id>" (migration 021); a bare conversation id from an older trigger
    const [conversationId = '', newest] = (message.payload ?? '').split(':');
    const upTo = newest === undefined ? undefined : Number(newest);
    for (const listener of this.listeners.get(conversationId) ?? []) listener.wake(Number.isSafeInteger(upTo) ? upTo : undefined);
  }

  private connect(): Promise<pg.PoolClient> {
    this.client ??= (async () => {
      const client = await this.pool.connect();
      client.on('notification', (message) => this.onNotification(message));
      client.on('error', () => this.lost(client));
      await client.query(`LISTEN ${EVENTS_CHANNEL}; LISTEN ${LIVE_DELTA_CHANNEL}`);
      this.current = client;
      if (this.missed) {
        // what was written while no one listened: every stream reads the table once
        this.missed = false;
        for (const set of this.listeners.values()) for (const listener of set) listener.wake();
      }
      return client;
    })().catch((error) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  /** The connection died: streams fall back to their periodic read until a new one listens. */
  private lost(client: pg.PoolClient): void {
    client.removeAllListeners('notification');
    client.removeAllListeners('error');
    client.on('error', () => undefined);
    try {
      client.release(true);
    } catch {
      // released already
    }
    if (this.current !== client) return;
    this.current = undefined;
    this.client = undefined;
    this.missed = true;
    const again = () => {
      this.retry = undefined;
      if (!this.listeners.size) return;
      this.connect().catch(() => (this.retry ??= setTimeout(again, RECONNECT_MS)));
    };
    this.retry ??= setTimeout(again, RECONNECT_MS);
  }

  private async disconnect(): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    const pending = this.client;
    this.client = undefined;
    this.current = undefined;
    const client = await pending?.catch(() => undefined);
    if (!client) return;
    await client.query(`UNLISTEN ${EVENTS_CHANNEL}; UNLISTEN ${LIVE_DELTA_CHANNEL}`).catch(() => undefined);
    client.removeAllListeners('notification');
    client.removeAllListeners('error');
    client.release();
  }
}
