// Whether the server can be reached, as every request finds out: a request that gets no answer at all (the
// network, or Brigade down) marks it unreachable, any answer marks it reachable. While unreachable, /healthz
// is asked every few seconds, so the banner goes away on its own once the server is back.
import { useSyncExternalStore } from 'react';

let reachable = true;
/** when the last request without an answer was made: an answer to an older request proves nothing newer */
let failedAt = -1;
const listeners = new Set<() => void>();
let probe: ReturnType<typeof setTimeout> | undefined;

function set(next: boolean): void {
  if (next === reachable) return;
  reachable = next;
  for (const listener of listeners) listener();
  if (!next) scheduleProbe();
}

function scheduleProbe(): void {
  clearTimeout(probe);
  probe = setTimeout(async () => {
    if (reachable) return;
    try {
      const response = await fetch('/healthz', { cache: 'no-store' });
      if (response.ok) return connection.answered(performance.now());
    } catch {
      // still unreachable
    }
    scheduleProbe();
  }, 2000);
}

export const connection = {
  /** now, for `answered`: when a request starts */
  started: () => performance.now(),
  /** a request made at `startedAt` got an answer (any status) */
  answered: (startedAt: number) => {
    if (startedAt > failedAt) set(true);
  },
  /** a request made at `startedAt` got no answer */
  failed: (startedAt: number) => {
    failedAt = Math.max(failedAt, startedAt);
    set(false);
  },
};

export function useReachable(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => reachable,
  );
}

export function ConnectionBanner() {
  const ok = useReachable();
  if (ok) return null;
  return (
    <div className="connection-banner" role="alert">
      Brigade cannot be reached right now. Trying again… Nothing you type is lost.
    </div>
  );
}
