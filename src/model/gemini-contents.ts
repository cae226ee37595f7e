// The transcript as Gemini's `contents`: user text, the model's text and function calls, and each run of
// tool results as one user turn of functionResponse parts (Gemini pairs a turn of calls with a turn of answers).
// Arguments and results go with their keys sorted, so a transcript is the same bytes on every call of a
// conversation (a result fresh from its tool and one read back from PostgreSQL alike): Gemini's implicit cache
// serves a repeated prefix only while it repeats byte for byte.
import type { Content, Part } from '@google/genai';
import type { ChatMessage, JsonObject } from '../shared/messages.ts';
import { sortedKeys } from '../shared/sorted-keys.ts';
import { STOPPED_NOTE } from '../shared/turn-control.ts';

/**
 * Google's documented stand-in for a thought signature. Gemini 3 and later refuse a replayed function call
 * without one, and the transcript does not keep the real signatures.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** Whether a model refuses function calls replayed without a thought signature (Gemini 3 and later). */
export function needsThoughtSignatures(model: string): boolean {
  const major = /(?:^|\/)gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}

export function toContents(messages: ChatMessage[], options: { signFunctionCalls?: boolean } = {}): Content[] {
  const contents: Content[] = [];
  const callNames = new Map<string, string>();
  let results: Part[] | undefined;

  for (const message of messages) {
    if (message.role === 'tool') {
      if (!results) {
        results = [];
        contents.push({ role: 'user', parts: results });
      }
      const name = message.tool ?? (message.callId ? callNames.get(message.callId) : undefined) ?? 'unknown_tool';
      results.push({
        functionResponse: { ...(message.callId ? { id: message.callId } : {}), name, response: sortedKeys(asResponse(message)) },
      });
      continue;
    }
    results = undefined;

    if (message.role === 'user') {
      contents.push({ role: 'user', parts: [{ text: message.text }] });
      continue;
    }

    const parts: Part[] = [];
    if (message.text || message.stopped) parts.push({ text: message.stopped ? `${message.text}\n\n${STOPPED_NOTE}`.trim() : message.text });
    for (const [index, call] of (message.toolCalls ?? []).entries()) {
      callNames.set(call.id, call.name);
      parts.push({
        functionCall: { id: call.id, name: call.name, args: sortedKeys(call.args) },
        // Gemini checks the signature on the first call of a step only.
        ...(options.signFunctionCalls && index === 0 ? { thoughtSignature: SKIP_THOUGHT_SIGNATURE } : {}),
      });
    }
    // Gemini refuses a content without parts; an empty assistant message carries nothing for the model anyway.
    if (parts.length > 0) contents.push({ role: 'model', parts });
  }
  return contents;
}

/** functionResponse.response must be an object: arrays, strings and the like travel as `{ result }`. */
function asResponse(message: ChatMessage): JsonObject {
  const { result } = message;
  if (result === undefined) return { result: message.text };
  if (result !== null && typeof result === 'object' && !Array.isArray(result)) return result as JsonObject;
  return { result };
}
