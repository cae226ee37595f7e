// What crosses Temporal is bounded by design. Temporal refuses a payload over 2 MB: an activity result that
// large fails the activity's completion, a local activity's marker or an Update's response that large fails
// or terminates the workflow. So a value of unbounded size crosses only up to a bound (a tool's result:
// INLINE_VALUE_MAX_BYTES, the model's text: TEXT_MAX_BYTES); past it the workflow gets a short stand-in
// (`elided`) and the value itself stays where the activity wrote it (PostgreSQL: the transcript and the
// tool-call record), which clients read from the API. Pure functions: the workflow bundle imports this.
// docs/security.md has the table of every crossing and its bound.
import type { ChatMessage, TurnResult } from './messages.ts';

/** A tool result larger than this crosses Temporal as a stand-in, not whole. */
export const INLINE_VALUE_MAX_BYTES = 16 * 1024;
/**
 * A message's text larger than this crosses cut. The model's text is bounded by its output limit (65,536
 * tokens for Gemini 2.5, about 256 KB), so only a model that misbehaves reaches it.
 */
export const TEXT_MAX_BYTES = 256 * 1024;
/**
 * A model reply's tool calls and structured answer, which the workflow needs whole (it checks and runs the calls,
 * opens items with their arguments, hands a kernel its answer): a reply past this is a failed model call.
 */
export const MODEL_CALLS_MAX_BYTES = 256 * 1024;
/**
 * How deep a reply's tool calls and structured answer may nest. Real arguments are a few levels deep; JSON.stringify
 * (and so Temporal's payload converter) overflows the stack near 10,000 levels, so a deeper reply is refused before
 * anything writes it.
 */
export const MODEL_CALLS_MAX_DEPTH = 64;
/** One message as it crosses, all told; past it a message keeps only what names it. */
export const MESSAGE_MAX_BYTES = 320 * 1024;
/** What an Update's response (or a step's result) may carry in messages, all told; later messages keep only their ids. */
export const TURN_RESULT_MAX_BYTES = 1024 * 1024;
/** How much of an elided value a stand-in keeps, so the Web UI and a client have a look at it. */
export const PREVIEW_BYTES = 1024;
/** An activity summary (the Web UI's line for it); the server keeps only a few hundred bytes. */
export const SUMMARY_MAX_CHARS = 200;

/** UTF-8 length of a string, without Buffer or TextEncoder (the workflow sandbox need not have them). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** The size of a value as JSON, as Temporal's JSON payload converter would write it. */
export const jsonBytes = (value: unknown): number => utf8Bytes(JSON.stringify(value) ?? '');

/** Whether `value` nests deeper than `max` arrays and objects; counted without recursion, so any depth is measured. */
export function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [current, depth] = stack.pop()!;
    if (!current || typeof current !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const item of Array.isArray(current) ? current : Object.values(current)) stack.push([item, depth + 1]);
  }
  return false;
}

/** The longest beginning of `text` that fits `maxBytes` of UTF-8, never splitting a surrogate pair. */
export function cutText(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 3 || utf8Bytes(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    const pair = code >= 0xd800 && code <= 0xdbff && end + 1 < text.length && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

/** A summary line for the Web UI, cut to SUMMARY_MAX_CHARS. */
export const summaryLine = (text: string): string =>
  text.length <= SUMMARY_MAX_CHARS ? text : `${text.slice(0, SUMMARY_MAX_CHARS - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;

/** What stands in for a value that did not cross Temporal whole. */
export interface Elided {
  elided: true;
  /** the whole value's size as JSON */
  bytes: number;
  /** its beginning (its text, or its JSON) */
  preview: string;
  /** a result's error, cut: what the workflow needs to say the tool failed */
  error?: string;
}

export const isElided = (value: unknown): value is Elided =>
  !!value &&
  typeof value === 'object' &&
  (value as { elided?: unknown }).elided === true &&
  typeof (value as { bytes?: unknown }).bytes === 'number';

/** A tool result as it may cross Temporal: whole up to `maxBytes`, else a stand-in (the record keeps it whole). */
export function resultForWorkflow(result: unknown, maxBytes = INLINE_VALUE_MAX_BYTES): unknown {
  const bytes = jsonBytes(result);
  if (bytes <= maxBytes) return result;
  const object = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : undefined;
  const error = object && 'error' in object ? String(object.error) : undefined;
  const source = typeof object?.text === 'string' ? object.text : typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
  const elided: Elided = { elided: true, bytes, preview: cutText(source, PREVIEW_BYTES) };
  if (error !== undefined) elided.error = cutText(error, PREVIEW_BYTES);
  return elided;
}

/**
 * A copy of a message that fits `maxBytes` (the whole one is in the transcript): its result as a stand-in,
 * its text cut, and past that nothing but what names it. `elided: true` marks a copy that lost anything.
 */
export function elideMessage(message: ChatMessage): ChatMessage {
  const resultBytes = message.result === undefined ? 0 : jsonBytes(message.result);
  const textBytes = utf8Bytes(message.text);
  if (resultBytes <= INLINE_VALUE_MAX_BYTES && textBytes <= TEXT_MAX_BYTES && jsonBytes(message) <= MESSAGE_MAX_BYTES) {
    // a result an activity handed over as a stand-in already: the message says so too
    return isElided(message.result) && !message.elided ? { ...message, elided: true } : message;
  }
  const copy: ChatMessage = { ...message, elided: true };
  if (resultBytes > INLINE_VALUE_MAX_BYTES) copy.result = resultForWorkflow(copy.result);
  if (textBytes > TEXT_MAX_BYTES) copy.text = `${cutText(copy.text, TEXT_MAX_BYTES)}…`;
  if (jsonBytes(copy) <= MESSAGE_MAX_BYTES) return copy;
  return nameOnly(copy);
}

/** A message reduced to what names it; the client reads the rest from the transcript. */
function nameOnly(message: ChatMessage): ChatMessage {
  return {
    id: message.id,
    role: message.role,
    text: cutText(message.text, PREVIEW_BYTES),
    elided: true,
    ...(message.callId ? { callId: message.callId } : {}),
    ...(message.tool ? { tool: cutText(message.tool, 200) } : {}),
    ...(isElided(message.result) ? { result: message.result } : {}),
  };
}

/**
 * Messages within `maxBytes` all told: each as `elideMessage` makes it, and once the budget is spent, the rest
 * by their ids and roles alone.
 */
export function boundMessages(messages: ChatMessage[], maxBytes: number, spentBefore = 0): ChatMessage[] {
  let spent = spentBefore;
  let changed = false;
  const bounded = messages.map((message) => {
    let copy = elideMessage(message);
    let size = jsonBytes(copy);
    if (spent + size > maxBytes) {
      copy = { id: message.id, role: message.role, text: '', elided: true };
      size = jsonBytes(copy);
    }
    spent += size;
    if (copy !== message) changed = true;
    return copy;
  });
  return changed ? bounded : messages;
}

/** An Update's response within Temporal's limit whatever the turn did (Temporal ends a workflow whose response is over 2 MB). */
export function boundTurnResult(result: TurnResult, maxBytes = TURN_RESULT_MAX_BYTES): TurnResult {
  const messages = boundMessages(result.messages, maxBytes, jsonBytes([result.pending, result.declined ?? []]));
  return messages === result.messages ? result : { ...result, messages };
}

/**
 * A reply the workflow acts on: its calls and structured answer whole (bounded by the model's output limit),
 * its text, which the workflow only shows, cut.
 */
export function boundReply(message: ChatMessage): ChatMessage {
  if (utf8Bytes(message.text) <= TEXT_MAX_BYTES) return message;
  return { ...message, text: `${cutText(message.text, TEXT_MAX_BYTES)}…`, elided: true };
}
