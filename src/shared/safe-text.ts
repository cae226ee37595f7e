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

// Characters that change how a name reads without being seen: controls (C0, DEL, C1), the bidi marks,
// embeddings, overrides and isolates (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), zero-width ones
// (U+200B–U+200D, U+2060–U+2064, U+FEFF), the soft hyphen, and the line and paragraph separators. A title or
// a name holding them can show as another (`invoice<U+202E>fdp.exe`) or hide text in a list, a log or an export.
const LINE_BREAKS = /[\r\n\t\v\f\u0085\u2028\u2029]+/g;
const INVISIBLE = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\uFFF9-\uFFFB]/g;

/**
 * A title or a name as it is stored: one line (line breaks and tabs become a space), without the characters
 * above, storable, runs of spaces as one, trimmed. The one rule for conversation titles (given, renamed or
 * model-written), API key names and display names from a sign-in provider.
 */
export const plainText = (text: string): string =>
  storableText(text.replace(LINE_BREAKS, ' ').replace(INVISIBLE, '')).replace(/\s+/g, ' ').trim();

/** A title or a name from a client: up to `max` characters, stored as plainText, refused when nothing visible is left. */
export const plainName = (max: number) =>
  safeString()
    .trim()
    .min(1)
    .max(max)
    .transform(plainText)
    .refine((text) => text.length > 0, 'must contain a visible character');

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
