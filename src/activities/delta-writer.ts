import type pg from 'pg';
import { livePublisher } from '../db/live-deltas.ts';
import { writeBatch } from '../db/batch.ts';
import type { NewEvent } from '../shared/messages.ts';
import { storableText } from '../shared/safe-text.ts';
import type { ModelStepInput } from './runtime-types.ts';

/** How long text gathers before it is written to the events table: a fast stream costs a write per 100 ms. */
export const PERSIST_MS = 100;
/** The least time between two live deltas of a step: the first piece goes at once, later ones coalesce. */
export const LIVE_MS = 10;

export interface DeltaWriterOptions {
  /** the activity's attempt: a retried step streams its reply again, and clients replace the earlier draft */
  attempt?: number;
  persistMs?: number;
  liveMs?: number;
  /** the step's final write (durable) follows every batch: they need not wait for the log's flush */
  deferCommit?: boolean;
}

/**
 * Streams the model's text to subscribers as `message.delta` events, two ways. Live: each piece by NOTIFY
 * (src/db/live-deltas.ts), the first at once and later ones at most every LIVE_MS, so a viewer sees text as
 * the model sends it without a table write. Persisted: the same text in the events table, batched per
 * PERSIST_MS as before, so a client that connects or resumes later reads it from there. Both carry
 * (messageId, attempt, offset) so a client keeps each piece once; keys are per step, attempt and chunk, so a
 * retried activity writes nothing twice.
 */
export class DeltaWriter {
  /** the reply so far, as clients see it */
  private text = '';
  /** how much of `text` was handed to the table, and to the live channel */
  private persisted = 0;
  private published = 0;
  private chunk = 0;
  private persistTimer: NodeJS.Timeout | undefined;
  private liveTimer: NodeJS.Timeout | undefined;
  private lastLiveAt = -Infinity;
  private publishing: Promise<void> | undefined;
  private closed = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly pool: pg.Pool;
  private readonly step: Pick<ModelStepInput, 'conversationId' | 'userId' | 'stepId'>;
  private readonly attempt: number;
  private readonly persistMs: number;
  private readonly liveMs: number;
  private readonly deferCommit: boolean;

  constructor(pool: pg.Pool, step: Pick<ModelStepInput, 'conversationId' | 'userId' | 'stepId'>, options: DeltaWriterOptions = {}) {
    this.pool = pool;
    this.step = step;
    this.attempt = options.attempt ?? 1;
    this.persistMs = options.persistMs ?? PERSIST_MS;
    this.liveMs = options.liveMs ?? LIVE_MS;
    this.deferCommit = options.deferCommit ?? false;
  }

  /** the reply so far, as clients were sent it (what a stopped reply keeps) */
  get streamed(): string {
    return this.text;
  }

  push(delta: string): void {
    // made storable piece by piece, so the live text, the persisted text and their offsets agree
    const piece = storableText(delta);
    if (!piece || this.closed) return;
    this.text += piece;
    this.persistTimer ??= setTimeout(() => this.flush(), this.persistMs);
    this.publish();
  }

  /**
   * A retried step says so before its first piece: an empty delta of its attempt, at offset 0, on which clients
   * drop the earlier attempt's draft at once instead of showing it until new text comes.
   */
  restart(): void {
    const { conversationId, userId, stepId } = this.step;
    const event: NewEvent = {
      key: `delta:${stepId}:${this.attempt}.0`,
      type: 'message.delta',
      data: { messageId: stepId, attempt: this.attempt, chunk: 0, offset: 0, text: '' },
    };
    this.writing = this.writing
      .then(
        async () => void (await writeBatch(this.pool, { conversationId, userId }, { events: [event] }, { deferCommit: this.deferCommit })),
      )
      .catch(() => undefined);
  }

  /** Stops streaming and hands back the unwritten tail, to be written with the final message. */
  async close(): Promise<NewEvent[]> {
    this.closed = true;
    clearTimeout(this.persistTimer);
    clearTimeout(this.liveTimer);
    this.persistTimer = this.liveTimer = undefined;
    // The end of the reply goes live now, not after the window (the final write takes a few ms more), queued
    // behind any delta in flight. Not awaited: a slow NOTIFY must not hold up the step's answer.
    void this.sendLive();
    await this.writing;
    const tail = this.take();
    return tail ? [tail] : [];
  }

  private publish(): void {
    // one live delta in flight at a time: pieces that come meanwhile go in the next one, in order
    if (this.publishing || this.closed || this.published === this.text.length) return;
    const wait = this.lastLiveAt + this.liveMs - performance.now();
    if (wait > 0) {
      this.liveTimer ??= setTimeout(() => {
        this.liveTimer = undefined;
        this.publish();
      }, wait);
      return;
    }
    this.publishing = this.sendLive().finally(() => {
      this.publishing = undefined;
      this.publish();
    });
  }

  private async sendLive(): Promise<void> {
    if (this.published === this.text.length) return;
    const offset = this.published;
    this.published = this.text.length;
    this.lastLiveAt = performance.now();
    const { conversationId, userId, stepId } = this.step;
    // A lost live delta costs a viewer nothing but time: the text reaches the table in the next batch.
    await livePublisher(this.pool).publish({
      conversationId,
      userId,
      messageId: stepId,
      attempt: this.attempt,
      offset,
      text: this.text.slice(offset),
    });
  }

  private take(): NewEvent | undefined {
    if (this.persisted === this.text.length) return undefined;
    this.chunk += 1;
    const offset = this.persisted;
    this.persisted = this.text.length;
    const { stepId } = this.step;
    return {
      key: `delta:${stepId}:${this.attempt}.${this.chunk}`,
      type: 'message.delta',
      data: { messageId: stepId, attempt: this.attempt, chunk: this.chunk, offset, text: this.text.slice(offset) },
    };
  }

  private flush(): void {
    this.persistTimer = undefined;
    const event = this.take();
    if (!event) return;
    const { conversationId, userId } = this.step;
    // Deltas are a courtesy to live viewers; the final message is the record, so a failed write is dropped.
    this.writing = this.writing
      .then(
        async () => void (await writeBatch(this.pool, { conversationId, userId }, { events: [event] }, { deferCommit: this.deferCommit })),
      )
      .catch(() => undefined);
  }
}
