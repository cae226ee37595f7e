// Elicitation: a server asks the user for input in the middle of a call. Not wired to the workflow yet:
// every request is declined, which the protocol allows and the server handles.
import type { Context } from '@temporalio/activity';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpQuestionRequest } from './types.ts';

export async function askWorkflow(_context: Context, _request: McpQuestionRequest, _conversationId: string): Promise<ElicitResult> {
  return { action: 'decline' };
}
