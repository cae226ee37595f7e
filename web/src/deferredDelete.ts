// Delete with Undo (issue 46, item 4): the DELETE request is sent only when the undo window closes, so Undo
// needs nothing from the server and a deletion undone never happened. Leaving the page meanwhile sends it at
// once (keepalive), so a deletion the person saw go through is not silently kept.
import { useSyncExternalStore } from 'react';
import { type ApiError, api, authorizationFor } from './api';

/** How long Undo is offered after Delete. */
export const UNDO_MS = 5_000;

export interface DeletionState {
  /** the conversation waiting for the undo window to close */
  pending?: { id: string; title: string };
  /** what became of the last one */
  last?: { id: string; title: string; outcome: 'deleted' | 'kept' | 'failed'; message?: string };
}

let state: DeletionState = {};
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

function set(next: DeletionState): void {
  state = next;
  for (const listener of listeners) listener();
}

const pathOf = (id: string) => `/v1/conversations/${encodeURIComponent(id)}`;

async function commit(): Promise<void> {
  const pending = state.pending;
  if (!pending) return;
  clearTimeout(timer);
  set({ last: state.last });
  try {
    await api('DELETE', pathOf(pending.id));
    set({ ...state, last: { ...pending, outcome: 'deleted' } });
  } catch (e) {
    set({ ...state, last: { ...pending, outcome: 'failed', message: (e as ApiError).message } });
  }
}

/** Deletes the conversation once the undo window closes (one at a time: a second Delete sends the first now). */
export function deleteLater(id: string, title: string): void {
  if (state.pending) void commit();
  set({ ...state, pending: { id, title } });
  timer = setTimeout(() => void commit(), UNDO_MS);
}

/** Keeps the conversation whose deletion waits; returns it. */
export function undoDelete(): { id: string; title: string } | undefined {
  const pending = state.pending;
  if (!pending) return undefined;
  clearTimeout(timer);
  set({ last: { ...pending, outcome: 'kept' } });
  return pending;
}

export function forgetDeletion(): void {
  if (!state.pending) set({});
}

if (typeof window !== 'undefined') {
  window.addEventListener('pagehide', () => {
    const pending = state.pending;
    if (!pending) return;
    clearTimeout(timer);
    const path = pathOf(pending.id);
    void fetch(path, { method: 'DELETE', headers: authorizationFor(path), keepalive: true }).catch(() => undefined);
  });
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => void listeners.delete(listener);
};

export const useDeletion = (): DeletionState => useSyncExternalStore(subscribe, () => state);
