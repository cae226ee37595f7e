import type pg from 'pg';
import { asUser } from '../db/pool.ts';
import { insertEvents } from '../db/transcript.ts';
import type { NewEvent } from '../shared/messages.ts';
import type { ModelStepInput } from './runtime-types.ts';

const FLUSH_MS = 100;

/**
 * Streams the model's text to subscribers as `message.delta` events, batched so a fast stream costs a
 * write per 100 ms rather than per token. Keys are per step and chunk, so a retried step adds no duplicates.
 */
export class DeltaWriter {
  private buffer = '';
  private chunk = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly pool: pg.Pool;
  private readonly step: Pick<ModelStepInput, 'conversationId' | 'userId' | 'stepId'>;

  constructor(pool: pg.Pool, step: Pick<ModelStepInput, 'conversationId' | 'userId' | 'stepId'>) {
    this.pool = pool;
    this.step = step;
  }

  push(delta: string): void {
    this.buffer += delta;
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Stops streaming and hands back the unwritten tail, to be written with the final message. */
  async close(): Promise<NewEvent[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    const tail = this.take();
    return tail ? [tail] : [];
  }

  private take(): NewEvent | undefined {
    if (!this.buffer) return undefined;
    this.chunk += 1;
    const event: NewEvent = {
      key: `delta:${this.step.stepId}:${this.chunk}`,
      type: 'message.delta',
      data: { messageId: this.step.stepId, chunk: this.chunk, text: this.buffer },
    };
    this.buffer = '';
    return event;
  }

  private flush(): void {
    this.timer = undefined;
    const event = this.take();
    if (!event) return;
    const { conversationId, userId } = this.step;
    // Deltas are a courtesy to live viewers; the final message is the record, so a failed write is dropped.
    this.writing = this.writing
      .then(() => asUser(this.pool, userId, (db) => insertEvents(db, conversationId, userId, [event])))
      .catch(() => undefined);
  }
}
