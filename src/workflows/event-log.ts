// What a conversation has not written to PostgreSQL yet: transcript messages and events. They wait here and
// ride along with the next activity that happens anyway (the model step takes them as input), so a turn
// costs no extra round trip for bookkeeping; flush() writes them on their own only when nothing else will.
// Pure: the writer is given, so this runs (and is tested) without a Temporal worker.
import type { ChatMessage, NewEvent } from '../shared/messages.ts';

export interface UnsavedBatch {
  messages: ChatMessage[];
  events: NewEvent[];
}

export type BatchWriter = (batch: UnsavedBatch) => Promise<void>;

/** A rejected signal's payload as the event keeps it: long payloads are cut, so a hostile one cannot bloat the log. */
export function summarisePayload(payload: unknown): unknown {
  const text = JSON.stringify(payload) ?? 'undefined';
  return text.length > 500 ? `${text.slice(0, 500)}…` : payload;
}

export class EventLog {
  #messages: ChatMessage[] = [];
  #events: NewEvent[] = [];
  #rejectedSignals: number;
  readonly #write: BatchWriter;

  constructor(write: BatchWriter, rejectedSignals = 0) {
    this.#write = write;
    this.#rejectedSignals = rejectedSignals;
  }

  message(...messages: ChatMessage[]): void {
    this.#messages.push(...messages);
  }

  event(...events: NewEvent[]): void {
    this.#events.push(...events);
  }

  /**
   * A signal that could not apply is recorded and counted, never thrown: an exception escaping a signal
   * handler would fail the workflow task again and again.
   */
  signalRejected(key: string, reason: string, payload: unknown): void {
    this.#rejectedSignals += 1;
    this.#events.push({ key, type: 'signal.rejected', data: { reason, payload: summarisePayload(payload) } });
  }

  /** carried across continue-as-new and shown by the state query */
  get rejectedSignals(): number {
    return this.#rejectedSignals;
  }

  // Every promise the workflow makes costs the SDK a stack trace (its promise hook, ~0.1 ms of CPU each), so
  // the hot path asks this first and skips awaits that would do nothing.
  hasUnsaved(): boolean {
    return this.#messages.length > 0 || this.#events.length > 0;
  }

  /** Hands everything over to an activity that writes it as part of its own work. */
  drain(): UnsavedBatch {
    const batch = { messages: this.#messages, events: this.#events };
    this.#messages = [];
    this.#events = [];
    return batch;
  }

  /** Writes what is unsaved now; nothing is written (and no activity scheduled) when there is nothing. */
  async flush(): Promise<void> {
    if (!this.hasUnsaved()) return;
    await this.#write(this.drain());
  }
}
