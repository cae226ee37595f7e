// The runtime's own tools (src/shared/runtime-tools.ts), run like an agent's by the runTool activity: `recall`
// reads an elided message back, from this conversation only (row-level security, and the conversation's id).
import { readMessage } from '../db/summaries.ts';
import type { ToolImplementation } from './tool-context.ts';

const recall: ToolImplementation = async ({ id }: { id: string }, { db, conversationId }) => {
  const message = await readMessage(db, conversationId, id);
  if (!message) return { error: `No message ${id} in this conversation.` };
  // the runTool activity caps what it returns at TOOL_RESULT_MAX_BYTES, with a note, as for any tool
  if (message.role === 'tool') return { id, tool: message.tool ?? null, result: message.result ?? message.text };
  return { id, role: message.role, text: message.text, ...(message.toolCalls ? { toolCalls: message.toolCalls } : {}) };
};

export const RUNTIME_IMPLEMENTATIONS: Readonly<Record<string, ToolImplementation>> = { recall };
