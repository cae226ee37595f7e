// The conversation's Server-Sent Events over fetch (EventSource cannot send a bearer token). After a dropped
// connection it reconnects with Last-Event-ID, and events it has already seen are skipped by id, so the
// transcript has neither gaps nor duplicates. Live deltas come without an id and are merged by offset.
import { authorizationFor } from './api';
import { connection } from './connection';
import type { StreamEvent } from './types';

export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface EventStreamHandle {
  close(): void;
  /** the last event id applied */
  lastId(): number;
}

export function openEventStream(
  conversationId: string,
  onEvent: (event: StreamEvent) => void,
  onStatus: (status: StreamStatus, detail?: string) => void,
  /** the conversation was deleted (here or elsewhere): the server ends the stream */
  onDeleted: () => void = () => undefined,
): EventStreamHandle {
  let lastId = 0;
  let closed = false;
  let controller: AbortController | undefined;
  let retryMs = 1000;

  async function connectOnce(): Promise<void> {
    controller = new AbortController();
    const path = `/v1/conversations/${encodeURIComponent(conversationId)}/events`;
    const startedAt = connection.started();
    const response = await fetch(path, {
      headers: {
        accept: 'text/event-stream',
        ...authorizationFor(path),
        ...(lastId ? { 'Last-Event-ID': String(lastId) } : {}),
      },
      signal: controller.signal,
      cache: 'no-store',
    }).catch((error: Error) => {
      if (error.name !== 'AbortError') connection.failed(startedAt);
      throw error;
    });
    connection.answered(startedAt);
    if (response.status === 404) onDeleted();
    if (!response.ok || !response.body) throw Object.assign(new Error(`events answered ${response.status}`), { status: response.status });
    onStatus('live');
    retryMs = 1000;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: number | undefined;
        let data = '';
        let name = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('id:')) id = Number(line.slice(3).trim());
          else if (line.startsWith('data:')) data += line.slice(5).replace(/^ /, '');
          else if (line.startsWith('retry:')) retryMs = Number(line.slice(6).trim()) || retryMs;
        }
        if (name === 'conversation.deleted') {
          closed = true;
          onDeleted();
          return;
        }
        if (!data) continue;
        if (id === undefined) {
          // A live delta: not in the table, so it has no id and leaves Last-Event-ID where it is; the reducer
          // keeps its text once when the table's rows bring it again.
          const event = JSON.parse(data) as StreamEvent;
          if (event.type === 'message.delta') onEvent({ ...event, id: undefined });
          continue;
        }
        if (!Number.isFinite(id) || id <= lastId) continue; // already applied before the reconnect
        const event = JSON.parse(data) as StreamEvent;
        lastId = id;
        onEvent(event);
      }
    }
  }

  (async () => {
    onStatus('connecting');
    while (!closed) {
      try {
        await connectOnce();
        if (closed) break;
        onStatus('reconnecting', 'the stream ended');
      } catch (error) {
        if (closed) break;
        const status = (error as { status?: number }).status;
        if (status === 401 || status === 403 || status === 404) {
          onStatus('closed', `events answered ${status}`);
          return;
        }
        onStatus('reconnecting', (error as Error).message);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryMs, 5000)));
      retryMs = Math.min(retryMs * 2, 5000);
    }
    onStatus('closed');
  })();

  return {
    close() {
      closed = true;
      controller?.abort();
    },
    lastId: () => lastId,
  };
}
