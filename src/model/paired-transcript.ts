// OpenAI and Anthropic refuse a transcript in which a tool call has no result before the next message, or a
// result answers no call; Gemini is lenient. A Stop while a call was parked, or a withdrawn approval, can leave
// either in the transcript, so both adapters send it paired: a missing result is said in words, an orphan dropped.
import type { ChatMessage } from '../shared/messages.ts';
import { sortedKeys } from '../shared/sorted-keys.ts';

export const UNANSWERED_CALL = { error: 'This call was not run: the turn ended before it had a result.' };

export function pairedTranscript(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let open: { id: string; name: string }[] = [];
  const closeOpen = () => {
    for (const call of open)
      out.push({ id: `${call.id}-unanswered`, role: 'tool', text: '', callId: call.id, tool: call.name, result: UNANSWERED_CALL });
    open = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const at = open.findIndex((call) => call.id === message.callId);
      if (at < 0) continue;
      open.splice(at, 1);
      out.push(message);
      continue;
    }
    closeOpen();
    out.push(message);
    if (message.role === 'assistant') open = (message.toolCalls ?? []).map((call) => ({ id: call.id, name: call.name }));
  }
  closeOpen();
  return out;
}

/** A tool result as the text both wire formats carry it in, its keys sorted so the same result is the same bytes. */
export function resultText(message: ChatMessage): string {
  return message.result === undefined ? message.text : JSON.stringify(sortedKeys(message.result));
}
