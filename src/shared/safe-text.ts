// Text PostgreSQL can store. A `text` column refuses NUL ("invalid byte sequence for encoding UTF8: 0x00")
// and `jsonb` refuses both NUL and an unpaired surrogate (`\ud83d` alone), so such text would fail the write
// that records a message, a tool call or an event. One rule for every string:
//  - from a client (API bodies, decisions, signals): refused at the boundary, with a 400 naming the field;
//  - from the model or a tool: made storable (each offending unit becomes U+FFFD), so a reply never fails a write.
// Pure functions only: the workflow imports this through the shared schemas.
import { z } from 'zod';

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

export const UNSTORABLE_MESSAGE = 'must not contain NUL (\\u0000) or unpaired surrogate characters';

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

/** The text with each NUL and unpaired surrogate replaced by U+FFFD. */
export const storableText = (text: string): string => (UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\uFFFD') : text);

/** A string schema that refuses text PostgreSQL cannot store. */
export const safeString = () => z.string().refine(isStorableText, UNSTORABLE_MESSAGE);

/** How deep a client-given JSON value may nest: deeper is refused before it reaches JSON.stringify or the model. */
export const MAX_JSON_DEPTH = 16;

/**
 * A JSON object from a client (a decision's edited arguments): every key and string inside must be
 * storable and nesting is bounded. The walk is iterative, so a hostile depth cannot overflow the stack.
 */
export const SafeJsonObject = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value, path: [] }];
  while (stack.length) {
    const { value: current, path } = stack.pop()!;
    if (path.length > MAX_JSON_DEPTH) {
      ctx.addIssue({ code: 'custom', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels`, path: path.slice(0, MAX_JSON_DEPTH) });
      return;
    }
    if (typeof current === 'string') {
      if (!isStorableText(current)) ctx.addIssue({ code: 'custom', message: UNSTORABLE_MESSAGE, path });
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
    } else if (current && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (!isStorableText(key)) {
          ctx.addIssue({ code: 'custom', message: `keys ${UNSTORABLE_MESSAGE}`, path });
          continue;
        }
        stack.push({ value: item, path: [...path, key] });
      }
    }
  }
});

/**
 * A JSON value with every string (and key) made storable; values that need no change are returned as they
 * are. Iterative for the same reason as above; a cycle cannot occur in values that came from JSON.
 */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (!value || typeof value !== 'object') return value;
  if (!needsRepair(value)) return value;
  const copy = (input: unknown): unknown => {
    if (typeof input === 'string') return storableText(input);
    // Dates and the like: repaired as JSON.stringify would write them.
    if (input && typeof (input as { toJSON?: unknown }).toJSON === 'function') return copy((input as { toJSON: () => unknown }).toJSON());
    if (Array.isArray(input)) return input.map(copy);
    if (input && typeof input === 'object') {
      return Object.fromEntries(Object.entries(input).map(([key, item]) => [storableText(key), copy(item)]));
    }
    return input;
  };
  return copy(value) as T;
}

function needsRepair(value: object): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const current = stack.pop();
    if (typeof current === 'string') {
      if (!isStorableText(current)) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (current && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (!isStorableText(key)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}
