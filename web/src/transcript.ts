// The transcript as the events build it: final messages by id (in order of first appearance), drafts that
// stream in from `message.delta` chunks, live pipeline progress. Pure, so replaying an event twice (or the
// GET view's messages and the replayed `message` events) changes nothing.
import type { ChatMessage, PendingItem, StreamEvent } from './types';

export interface ProgressStep {
  workflowId: string;
  step: string;
  index: number;
  of: number;
  state: string;
  message?: string;
}

export interface Transcript {
  order: string[];
  messages: Record<string, ChatMessage>;
  /** streaming text by message id: chunk number -> text */
  drafts: Record<string, Record<number, string>>;
  progress: Record<string, ProgressStep[]>;
  /** pending items as they opened and closed, shown in place as a record of what was decided */
  items: Record<string, { item: PendingItem; closed?: ClosedInfo }>;
  lastEventId: number;
}

export interface ClosedInfo {
  decision?: string;
  reason?: string | null;
  choice?: string;
  closedAs?: 'decided' | 'expired' | 'superseded';
  timedOut?: boolean;
}

export const emptyTranscript = (): Transcript => ({ order: [], messages: {}, drafts: {}, progress: {}, items: {}, lastEventId: 0 });

export function addMessages(t: Transcript, messages: ChatMessage[]): Transcript {
  let next = t;
  for (const message of messages) {
    if (next.messages[message.id]) continue;
    if (next === t) next = { ...t, order: [...t.order], messages: { ...t.messages } };
    if (!next.order.includes(message.id)) next.order.push(message.id);
    next.messages[message.id] = message;
  }
  return next;
}

export function applyEvent(t: Transcript, event: StreamEvent): Transcript {
  if (event.id <= t.lastEventId) return t;
  let next: Transcript = { ...t, lastEventId: event.id };
  const data = event.data ?? {};
  switch (event.type) {
    case 'message':
      next = addMessages(next, [data as ChatMessage]);
      break;
    case 'message.delta': {
      const id = String(data.messageId);
      if (next.messages[id]) break;
      const chunks = { ...(next.drafts[id] ?? {}), [Number(data.chunk)]: String(data.text ?? '') };
      next.drafts = { ...next.drafts, [id]: chunks };
      if (!next.order.includes(id)) next.order = [...next.order, id];
      break;
    }
    case 'pending.opened': {
      const item = data as PendingItem;
      next.items = { ...next.items, [item.id]: { item } };
      next.order = [...next.order, `pending:${item.id}`];
      break;
    }
    case 'pending.closed': {
      const entry = next.items[String(data.id)];
      if (entry) next.items = { ...next.items, [String(data.id)]: { ...entry, closed: data as ClosedInfo } };
      break;
    }
    case 'progress': {
      const step = data as ProgressStep;
      const key = String(step.workflowId ?? 'pipeline');
      if (!next.progress[key]) next.order = [...next.order, `progress:${key}`];
      const steps = (next.progress[key] ?? []).filter((s) => s.index !== step.index);
      next.progress = { ...next.progress, [key]: [...steps, step].sort((a, b) => a.index - b.index) };
      break;
    }
  }
  return next;
}

export function draftText(chunks: Record<number, string> | undefined): string {
  if (!chunks) return '';
  return Object.keys(chunks)
    .map(Number)
    .sort((a, b) => a - b)
    .map((n) => chunks[n])
    .join('');
}
