// When a tool's result is committed, as an event stream learns it: the first `brigade_events` notification
// for the conversation whose newest event id covers its `tool-result:<callId>` event (migration 021's payload,
// "<conversation>:<newest event id>"). The bench's approval runs time "decision -> tool result" with it.
//
// It listens and queries on one connection, so it runs one query at a time: notifications that come while a
// query runs wait and are checked together by the next one. Querying on each notification as it came put
// several queries on the connection at once under load, which pg queues with a deprecation warning ("client.query()
// was called while the client was already executing a query") and pg 9 refuses; and two checks of one
// conversation in flight could each write back a stale list of waiters.
import pg from 'pg';

interface Waiter {
  key: string;
  resolve: (at: number) => void;
}

interface Notification {
  conversationId: string;
  /** the newest event id the notification is for (absent from an older trigger's payload: any) */
  upTo: number | undefined;
  at: number;
}

export class ToolResultWatch {
  readonly #client: pg.Client;
  readonly #waiting = new Map<string, Waiter[]>();
  #queue: Notification[] = [];
  #draining = false;
  #idle: Promise<void> = Promise.resolve();

  private constructor(client: pg.Client) {
    this.#client = client;
    client.on('notification', (message) => {
      const [conversationId = '', newest] = (message.payload ?? '').split(':');
      const upTo = newest === undefined ? undefined : Number(newest);
      this.#queue.push({ conversationId, upTo: Number.isSafeInteger(upTo) ? upTo : undefined, at: performance.now() });
      this.#drain();
    });
  }

  static async start(url: string): Promise<ToolResultWatch> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('LISTEN brigade_events');
    return new ToolResultWatch(client);
  }

  /** Resolves with performance.now() at the notification that brought the event. Call before acting. */
  next(conversationId: string, key: string): Promise<number> {
    return new Promise((resolve) => {
      const list = this.#waiting.get(conversationId) ?? [];
      list.push({ key, resolve });
      this.#waiting.set(conversationId, list);
    });
  }

  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#idle = (async () => {
      try {
        while (this.#queue.length) {
          const batch = this.#queue;
          this.#queue = [];
          for (const conversationId of new Set(batch.map((notification) => notification.conversationId))) {
            await this.#check(
              conversationId,
              batch.filter((notification) => notification.conversationId === conversationId),
            );
          }
        }
      } finally {
        this.#draining = false;
      }
    })().catch(() => undefined);
  }

  /** One query for the conversation's waiters; each found event goes to the first notification that covers it. */
  async #check(conversationId: string, notifications: Notification[]): Promise<void> {
    if (!this.#waiting.get(conversationId)?.length) return;
    const keys = this.#waiting.get(conversationId)!.map((waiter) => waiter.key);
    const { rows } = await this.#client.query<{ key: string; id: string }>(
      'SELECT key, id FROM events WHERE conversation_id = $1 AND key = ANY($2)',
      [conversationId, keys],
    );
    const found = new Map(rows.map((row) => [row.key, Number(row.id)]));
    const left: Waiter[] = [];
    // read again after the query: waiters added meanwhile stay
    for (const waiter of this.#waiting.get(conversationId) ?? []) {
      const id = found.get(waiter.key);
      const by =
        id === undefined ? undefined : notifications.find((notification) => notification.upTo === undefined || notification.upTo >= id);
      if (by) waiter.resolve(by.at);
      else left.push(waiter);
    }
    if (left.length) this.#waiting.set(conversationId, left);
    else this.#waiting.delete(conversationId);
  }

  async stop(): Promise<void> {
    await this.#idle;
    await this.#client.end();
  }
}
