export interface SseEvent {
  /** absent on a live delta (it is not in the table) */
  id?: string;
  event?: string;
  data: any;
  /** performance.now() when it arrived */
  at: number;
}

/** One Server-Sent Events frame: its fields as sent (`data` lines joined), the comment lines dropped. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
}

/** The frames of an SSE body as they complete, for the tests', the bench's and the drills' readers alike. */
export async function* sseFrames(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const frame: SseFrame = {};
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') frame.id = value;
        else if (field === 'event') frame.event = value;
        else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
      }
      yield frame;
    }
  }
}

/**
 * Reads a Server-Sent Events stream until `until` says stop or the time runs out: the table's events, and with
 * `live: true` the live deltas between them too (frames without an id).
 */
export async function readSse(
  url: string,
  options: {
    token: string;
    lastEventId?: string;
    until: (events: SseEvent[]) => boolean;
    timeoutMs?: number;
    live?: boolean;
    onOpen?: () => void;
  },
): Promise<SseEvent[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 10_000);
  const events: SseEvent[] = [];
  try {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${options.token}`, ...(options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {}) },
      signal: controller.signal,
    });
    if (response.status !== 200) throw new Error(`SSE answered ${response.status}: ${await response.text()}`);
    options.onOpen?.();
    for await (const frame of sseFrames(response.body!)) {
      if (frame.data !== undefined && (frame.id !== undefined || options.live)) {
        events.push({
          ...(frame.id !== undefined ? { id: frame.id } : {}),
          ...(frame.event ? { event: frame.event } : {}),
          data: JSON.parse(frame.data),
          at: performance.now(),
        });
      }
      if (options.until(events)) break;
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}
