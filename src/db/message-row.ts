import type { ChatMessage } from '../shared/messages.ts';

/** A transcript row as the messages table (and the functions that read it) return it. */
export interface MessageRow {
  id: string;
  role: ChatMessage['role'];
  text: string;
  tool_calls: ChatMessage['toolCalls'] | null;
  call_id: string | null;
  tool: string | null;
  args: ChatMessage['args'] | null;
  result: unknown;
  cards: ChatMessage['cards'] | null;
  structured: unknown;
}

export function rowToMessage(row: MessageRow): ChatMessage {
  const message: ChatMessage = { id: row.id, role: row.role, text: row.text };
  if (row.tool_calls) message.toolCalls = row.tool_calls;
  if (row.call_id) message.callId = row.call_id;
  if (row.tool) message.tool = row.tool;
  if (row.args) message.args = row.args;
  if (row.role === 'tool') message.result = row.result;
  // an assistant row's result column marks a reply Stop cut short (src/db/batch.ts)
  if (row.role === 'assistant' && (row.result as { stopped?: unknown } | null)?.stopped === true) message.stopped = true;
  if (row.cards) message.cards = row.cards;
  if (row.structured !== null && row.structured !== undefined) message.structured = row.structured;
  return message;
}
