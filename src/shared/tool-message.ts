import type { ChatMessage, JsonObject, ToolCall } from './messages.ts';

export const resultError = (result: unknown): string | undefined =>
  result && typeof result === 'object' && 'error' in result ? String(result.error) : undefined;

/** The transcript entry for a call's outcome; its id is the call's id, so it is written once. */
export function toolMessage(call: Pick<ToolCall, 'id' | 'name'>, args: JsonObject, result: unknown, cards?: JsonObject[]): ChatMessage {
  const error = resultError(result);
  return {
    ...(cards?.length ? { cards } : {}),
    id: call.id,
    role: 'tool',
    callId: call.id,
    tool: call.name,
    args,
    result,
    text: error ? `${call.name} failed: ${error}` : `${call.name} done`,
  };
}
