// The transcript as the events build it: final messages by id (in order of first appearance), drafts that
// stream in from `message.delta` events, live pipeline progress. Pure, so replaying an event twice (or the
// GET view's messages and the replayed `message` events) changes nothing.
//
// A draft's text comes twice: live deltas (no event id: they are not in the table) as the model sends it, and
// the table's `message.delta` rows a moment later, or again after a reconnect. Both carry the piece's offset in
// the reply, so the draft keeps each character once and holds a piece that arrives ahead of a gap until the gap
// fills. A retried model step (a higher attempt) streams its reply again: the draft starts over with it.
import type { ChatMessage, PendingItem, StreamEvent } from './types.ts';

export interface ProgressStep {
  workflowId: string;
  step: string;
  index: number;
  of: number;
  state: string;
  message?: string;
  /** every step's name in order (absent from events written before it was added) */
  steps?: string[];
}

export interface Transcript {
  order: string[];
  messages: Record<string, ChatMessage>;
  /** streaming text by message id */
  drafts: Record<string, Draft>;
  progress: Record<string, ProgressStep[]>;
  /** pending items as they opened and closed, shown in place as a record of what was decided */
  items: Record<string, { item: PendingItem; closed?: ClosedInfo }>;
  /** messages the agent's model could read only the beginning of (too large for its context on their own) */
  cut?: Record<string, true>;
  /** where `order` stood at the last `branch.changed` event: what comes after it is on the current branch (branchPath.ts) */
  branchAt?: number;
  lastEventId: number;
  /**
   * the message the event stream last placed: an item or a progress card that opens next goes right after it
   * (and after the rows placed there before it), wherever the GET view's messages put the rest
   */
  anchor?: string;
}

export interface Draft {
  attempt: number;
  /** the reply's text from its start, without a gap */
  text: string;
  /** pieces that arrived ahead of a gap, by offset */
  ahead: Record<number, string>;
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
    // A copy an Update's response shortened (`elided`) gives way to the whole message from the event stream.
    const known = next.messages[message.id];
    if (known && (message.elided || !known.elided)) continue;
    if (next === t) next = { ...t, order: [...t.order], messages: { ...t.messages } };
    if (!next.order.includes(message.id)) next.order.push(message.id);
    next.messages[message.id] = message;
  }
  return next;
}

export function applyEvent(t: Transcript, event: StreamEvent): Transcript {
  // A live delta has no id and moves no id: the table's events say where a reconnect resumes.
  const live = event.id === undefined;
  if (!live && event.id! <= t.lastEventId) return t;
  let next: Transcript = live ? { ...t } : { ...t, lastEventId: event.id! };
  const data = event.data ?? {};
  switch (event.type) {
    case 'message':
      next = addMessages(next, [data as ChatMessage]);
      next.anchor = String((data as ChatMessage).id);
      break;
    case 'message.delta': {
      const id = String(data.messageId);
      if (!live) next.anchor = id;
      if (next.messages[id]) break;
      const draft = mergeDelta(next.drafts[id], data);
      if (draft === next.drafts[id]) break;
      next.drafts = { ...next.drafts, [id]: draft };
      if (!next.order.includes(id)) next.order = [...next.order, id];
      break;
    }
    case 'pending.opened': {
      const item = data as PendingItem;
      if (next.items[item.id]) break;
      next.items = { ...next.items, [item.id]: { item } };
      next.order = placed(next.order, next.anchor, `pending:${item.id}`);
      break;
    }
    case 'branch.changed':
      next.branchAt = next.order.length;
      break;
    case 'context.cut':
      next.cut = { ...next.cut, [String(data.messageId)]: true };
      break;
    case 'pending.closed': {
      const entry = next.items[String(data.id)];
      if (entry) next.items = { ...next.items, [String(data.id)]: { ...entry, closed: data as ClosedInfo } };
      break;
    }
    case 'progress': {
      const step = data as ProgressStep;
      const key = String(step.workflowId ?? 'pipeline');
      if (!next.progress[key]) next.order = placed(next.order, next.anchor, `progress:${key}`);
      const steps = (next.progress[key] ?? []).filter((s) => s.index !== step.index);
      next.progress = { ...next.progress, [key]: [...steps, step].sort((a, b) => a.index - b.index) };
      break;
    }
  }
  return live && next.drafts === t.drafts ? t : next;
}

const isRecord = (key: string) => key.startsWith('pending:') || key.startsWith('progress:');

/**
 * The order with `key` where the events put it: after `anchor` (the message the stream placed last) and the
 * records placed after it already. The page loads the transcript (GET) and replays the events at once, in
 * either order: appending a record would put it after every message the GET had brought, at the end.
 */
function placed(order: string[], anchor: string | undefined, key: string): string[] {
  let at = anchor === undefined ? 0 : order.indexOf(anchor) + 1;
  if (anchor !== undefined && at === 0) at = order.length;
  while (at < order.length && isRecord(order[at]!)) at += 1;
  return [...order.slice(0, at), key, ...order.slice(at)];
}

/**
 * A delta merged into a draft: text it already holds is dropped, text past its end is appended, text beyond a
 * gap waits. Rows from servers before offsets follow one another: their text is appended.
 */
export function mergeDelta(draft: Draft | undefined, delta: { attempt?: unknown; offset?: unknown; text?: unknown }): Draft {
  const attempt = typeof delta.attempt === 'number' ? delta.attempt : 1;
  if (draft && attempt < draft.attempt) return draft;
  const base: Draft = draft && attempt === draft.attempt ? draft : { attempt, text: '', ahead: {} };
  const text = String(delta.text ?? '');
  const offset = typeof delta.offset === 'number' ? delta.offset : base.text.length;
  if (!text || offset + text.length <= base.text.length) return base;
  const ahead = { ...base.ahead };
  if ((ahead[offset]?.length ?? 0) < text.length) ahead[offset] = text;
  let merged = base.text;
  for (let moved = true; moved;) {
    moved = false;
    for (const key of Object.keys(ahead)) {
      const start = Number(key);
      if (start > merged.length) continue;
      const piece = ahead[start]!;
      if (start + piece.length > merged.length) merged += piece.slice(merged.length - start);
      delete ahead[start];
      moved = true;
    }
  }
  return { attempt, text: merged, ahead };
}

export function draftText(draft: Draft | undefined): string {
  return draft?.text ?? '';
}
