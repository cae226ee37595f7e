// What a model step sends of a conversation, within a token budget (issue 44): the latest summary of its older
// turns (beside the system prompt), then the messages after it, with old tool results as stubs the model can
// read back (`recall`), the oldest turns left out when they still do not fit, and a message too large on its
// own cut with a note. Pure: the step reads the rows (O(window), src/db/batch.ts) and sends what this returns.
// A call and its results are kept or left out together: providers refuse a call without its result.
import type { ChatMessage } from '../shared/messages.ts';
import { estimateTokens } from '../model/token-estimate.ts';
import type { ConversationSummary } from '../db/summaries.ts';
import { recallTool } from '../shared/runtime-tools.ts';

const RECALL_TOOL = recallTool.name;

/** Past this share of the budget, the step asks for its older turns to be folded into a summary. */
export const COMPACT_AT = 0.75;
/** What a fold leaves in view: the newest turns within this share of the budget (at least the latest turn). */
export const KEEP_AFTER_FOLD = 0.4;
/** Tool results of the newest turns stay whole while the window has room; older ones become stubs. */
export const KEEP_RESULTS_TURNS = 2;
/** A stub is sent only for a result larger than this (bytes): a small result is cheaper than its stub. */
const STUB_OVER_BYTES = 600;

export interface WindowInput {
  /** the messages after the summary (or all of them), oldest first */
  messages: readonly ChatMessage[];
  summary?: ConversationSummary;
  /** the system prompt, the tools' declarations and a stateful agent's context: sent whatever the window holds */
  fixedTokens: number;
  budget: number;
  /** the read stopped at its row limit: older messages after the summary exist that it did not read */
  readCut?: boolean;
}

export interface ContextWindow {
  /** what the model is sent, oldest first (the summary goes beside the system prompt: withSummary) */
  messages: ChatMessage[];
  summary?: ConversationSummary;
  /** the estimate of everything sent: fixed part, summary and messages */
  tokens: number;
  /** messages sent as a stub (ids) */
  elided: string[];
  /** messages left out (older than what fits, and no summary holds them yet) */
  dropped: number;
  /** messages cut to fit on their own (ids) */
  cut: string[];
  /** the older turns should be folded into a summary, through this message */
  compactThrough?: string;
}

/** The summary as the model reads it: after the system prompt, marked as what it is. */
export function withSummary(system: string, summary: ConversationSummary | undefined): string {
  if (!summary) return system;
  return `${system}\n\n## Earlier in this conversation (a summary; the messages themselves are no longer shown)\n${summary.text}`;
}

export const messageTokens = (message: ChatMessage): number => estimateTokens(JSON.stringify(message));

/** A tool result as a stub: what it was, and how to read it again. */
export function stub(message: ChatMessage): ChatMessage {
  const bytes = Buffer.byteLength(JSON.stringify(message.result ?? message.text), 'utf8');
  return {
    ...message,
    result: { elided: true, id: message.id, bytes, note: `call ${RECALL_TOOL} with this id to read it` },
  };
}

/** A message too large for the window on its own: its beginning, and a note that says so. */
export function cutToFit(message: ChatMessage, tokens: number): ChatMessage {
  const room = Math.max(200, tokens * 4 - 400);
  if (message.role === 'tool') {
    const whole = JSON.stringify(message.result ?? message.text);
    return {
      ...message,
      result: {
        cut: true,
        id: message.id,
        bytes: Buffer.byteLength(whole, 'utf8'),
        head: whole.slice(0, room),
        note: `This result is too large for the model's context, so only its beginning is here; call ${RECALL_TOOL} with this id to read it whole.`,
      },
    };
  }
  const bytes = Buffer.byteLength(message.text, 'utf8');
  const { toolCalls, ...rest } = message;
  return {
    ...rest,
    ...(toolCalls ? { toolCalls } : {}),
    text: `${message.text.slice(0, room)}\n[This message was cut: it is ${bytes} bytes, too large for the model's context; only its beginning is shown.]`,
  };
}

/** Groups: a reply with tool calls and the results that answer it, or one message. */
function units(messages: readonly ChatMessage[]): ChatMessage[][] {
  const out: ChatMessage[][] = [];
  for (const message of messages) {
    const last = out.at(-1);
    const opener = last?.[0];
    if (message.role === 'tool' && opener?.role === 'assistant' && opener.toolCalls?.some((call) => call.id === message.callId)) {
      last!.push(message);
      continue;
    }
    out.push([message]);
  }
  return out;
}

export function buildWindow({ messages, summary, fixedTokens, budget, readCut = false }: WindowInput): ContextWindow {
  // a read cut at its limit may begin with results whose call it did not read: left out, as a provider would
  let start = 0;
  while (start < messages.length && messages[start]!.role === 'tool') start += 1;
  let dropped = start;
  const groups = units(messages.slice(start));
  const turnOf: number[] = [];
  let turn = 0;
  for (const group of groups) {
    if (group[0]!.role === 'user') turn += 1;
    turnOf.push(turn);
  }
  const lastTurn = turn;
  // the current turn begins at its user message: it is never left out (a parked item's call is in it)
  const current = Math.max(
    0,
    groups.findLastIndex((group) => group[0]!.role === 'user'),
  );
  const elided: string[] = [];
  const cut: string[] = [];
  const summaryTokens = summary ? estimateTokens(withSummary('', summary)) : 0;
  const room = budget - fixedTokens - summaryTokens;

  // old results become stubs, whatever the room: they are sent again on every step otherwise
  const sent = groups.map((group, index) =>
    group.map((message) => {
      const old = turnOf[index]! <= lastTurn - KEEP_RESULTS_TURNS;
      if (old && message.role === 'tool' && Buffer.byteLength(JSON.stringify(message.result ?? ''), 'utf8') > STUB_OVER_BYTES) {
        elided.push(message.id);
        return stub(message);
      }
      return message;
    }),
  );
  const sizes = () => sent.map((group) => group.reduce((sum, message) => sum + messageTokens(message), 0));
  let size = sizes();
  let first = 0;
  const total = () => size.reduce((sum, tokens, index) => sum + (index >= first ? tokens : 0), 0);
  // the size a fold would go by: what the turns take once old results are stubs
  const natural = size.reduce((sum, tokens) => sum + tokens, 0);

  // still too much: newer results become stubs too, oldest first, all but the ones the model answers now
  for (let index = 0; index < sent.length - 1 && total() > room; index += 1) {
    sent[index] = sent[index]!.map((message) => {
      if (
        message.role !== 'tool' ||
        elided.includes(message.id) ||
        Buffer.byteLength(JSON.stringify(message.result ?? ''), 'utf8') <= STUB_OVER_BYTES
      )
        return message;
      elided.push(message.id);
      return stub(message);
    });
    size = sizes();
  }
  // then the oldest turns are left out, whole, never the current one
  while (total() > room && first < current) {
    do {
      dropped += sent[first]!.length;
      first += 1;
    } while (first < current && groups[first]![0]!.role !== 'user');
  }
  // what is left is too large on its own: its largest messages are cut to a share of the room each
  for (let round = 0; round < 4 && total() > room; round += 1) {
    const kept = sent.slice(first).flat();
    const share = Math.max(50, Math.floor(room / Math.max(1, kept.length)));
    for (let index = first; index < sent.length; index += 1) {
      sent[index] = sent[index]!.map((message) => {
        if (messageTokens(message) <= share) return message;
        if (!cut.includes(message.id)) cut.push(message.id);
        return cutToFit(message, share);
      });
    }
    size = sizes();
  }
  const kept = sent.slice(first).flat();
  const tokens = fixedTokens + summaryTokens + total();
  const due = readCut || dropped > 0 || fixedTokens + summaryTokens + natural > budget * COMPACT_AT;
  const through = due ? foldPoint(groups, size, current, budget * KEEP_AFTER_FOLD) : undefined;
  return {
    messages: kept,
    ...(summary ? { summary } : {}),
    tokens,
    elided,
    dropped,
    cut,
    ...(through ? { compactThrough: through } : {}),
  };
}

/**
 * The last message a summary should fold: everything before the earliest turn from which the rest fits within
 * `keep` tokens, and never into the current turn (its calls may wait on a person). None when only the current
 * turn is there.
 */
function foldPoint(groups: ChatMessage[][], size: number[], current: number, keep: number): string | undefined {
  let tail = size.slice(current).reduce((sum, tokens) => sum + tokens, 0);
  let from = current;
  for (let index = current - 1; index > 0; index -= 1) {
    tail += size[index]!;
    if (tail > keep) break;
    if (groups[index]![0]!.role === 'user') from = index;
  }
  if (from <= 0) return undefined;
  return groups[from - 1]!.at(-1)!.id;
}
