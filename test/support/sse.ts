export interface SseEvent {
  /** absent on a live delta (it is not in the table) */
  id?: string;
  event?: string;
  data: any;
  /** performance.now() when it arrived */
  at: number;
}

/**
 * Reads a Server-Sent Events stream until `until` says stop or the time runs out: the table's events, and with
 * `live: true` the live deltas between them too (frames without an id).
 */
export async function readSse(
  url: string,
  options: { token: string; lastEventId?: string; until: (events: SseEvent[]) => boolean; timeoutMs?: number; live?: boolean },
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
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { data: undefined, at: performance.now() };
        for (const line of block.split('\n')) {
          const [field, ...rest] = line.split(': ');
          const value = rest.join(': ');
          if (field === 'id') event.id = value;
          else if (field === 'event') event.event = value;
          else if (field === 'data') event.data = JSON.parse(value);
        }
        if (event.data !== undefined && (event.id !== undefined || options.live)) events.push(event);
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
