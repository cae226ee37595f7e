// What a tool returns to the model is capped (TOOL_RESULT_MAX_BYTES): a tool or an MCP server that answers
// with megabytes would swamp the model's window and every later step of the conversation. The cap applies
// before the result is recorded, so the tool-call record, the transcript and the turn's answer hold exactly
// what the model saw, note included.
import { cutText, jsonBytes } from '../shared/payload-bounds.ts';

export const TOOL_RESULT_MAX_BYTES_DEFAULT = 128 * 1024;

export interface Truncation {
  /** the whole result's size as JSON */
  bytes: number;
  /** the cap */
  maxBytes: number;
}

/** The result as the model gets it: whole when it fits `maxBytes` of JSON, else its beginning with a note. */
export function capToolResult(result: unknown, maxBytes: number): unknown {
  const bytes = jsonBytes(result);
  if (bytes <= maxBytes) return result;
  const object = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : undefined;
  const note =
    `This result was cut: it was ${bytes} bytes and a tool result may be ${maxBytes} bytes, so only its beginning is here. ` +
    'Say so if it matters, and ask for less (a narrower query, fewer fields, one page) to see more.';
  const truncated: Truncation = { bytes, maxBytes };
  // An error keeps its shape (the turn says the tool failed); text keeps the small fields beside it
  // (structured content, files) when they fit; anything else is cut as JSON text.
  const { error, text, ...rest } = object ?? {};
  const keepRest = object && jsonBytes(rest) <= maxBytes / 4;
  const field = typeof error === 'string' ? 'error' : 'text';
  const source =
    typeof error === 'string'
      ? error
      : typeof text === 'string' && keepRest
        ? text
        : typeof result === 'string'
          ? result
          : (JSON.stringify(result) ?? '');
  const build = (room: number) => ({
    ...(keepRest && field === 'text' ? rest : {}),
    [field]: cutText(source, Math.max(0, room)),
    truncated,
    note,
  });
  // JSON escapes (quotes, control characters) make the text longer than its UTF-8 bytes: shrink until it fits.
  let room = maxBytes - jsonBytes(build(0));
  let capped = build(room);
  for (let i = 0; i < 8 && jsonBytes(capped) > maxBytes; i += 1) {
    room -= jsonBytes(capped) - maxBytes + 16;
    capped = build(room);
  }
  return capped;
}
