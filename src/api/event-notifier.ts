import type pg from 'pg';

type Listener = () => void;

/**
 * One LISTEN connection per API process wakes the event streams of a conversation when its events table
 * gets rows; it holds a pool client only while someone is subscribed.
 */
export class EventNotifier {
  private readonly pool: pg.Pool;
  private readonly listeners = new Map<string, Set<Listener>>();
  private client: Promise<pg.PoolClient> | undefined;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async subscribe(conversationId: string, listener: Listener): Promise<() => void> {
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    await this.connect();
    return () => {
      set.delete(listener);
      if (!set.size) this.listeners.delete(conversationId);
      if (!this.listeners.size) void this.disconnect();
    };
  }

  private connect(): Promise<pg.PoolClient> {
    this.client ??= (async () => {
      const client = await this.pool.connect();
      client.on('notification', (message) => {
        for (const listener of this.listeners.get(message.payload ?? '') ?? []) listener();
      });
      client.on('error', () => {
        // The streams fall back to their periodic poll; the next subscriber reconnects.
        this.client = undefined;
      });
      await client.query('LISTEN brigade_events');
      return client;
    })().catch((error) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private async disconnect(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    const client = await pending?.catch(() => undefined);
    if (!client) return;
    await client.query('UNLISTEN brigade_events').catch(() => undefined);
    client.removeAllListeners('notification');
    client.release();
  }
}
