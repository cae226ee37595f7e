// What the scripted model servers (fake-gemini.ts, fake-wire.ts) keep of the requests they got, and a way
// for a test to wait until some number have come.
export interface RequestLog<R> {
  readonly requests: R[];
  /** records a request and wakes the tests waiting for it */
  add(request: R): void;
  /** the first `count` requests, once they have come; rejects naming the server after `timeoutMs` */
  waitFor(count: number, timeoutMs?: number): Promise<R[]>;
}

export function createRequestLog<R>(server: string): RequestLog<R> {
  const requests: R[] = [];
  const waiters = new Set<() => void>();
  return {
    requests,
    add(request) {
      requests.push(request);
      for (const wake of waiters) wake();
    },
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests.slice(0, count));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${server}: ${requests.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
