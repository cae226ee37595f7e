// The activity's side of an elicitation (see definitions.ts): signal the conversation, then poll its answer.
// The wait is bounded by the question's deadline plus a grace period: when the workflow has not answered by
// then (it is gone, or stuck), the server is told `cancel`, as for a question nobody answered.
import type { Context } from '@temporalio/activity';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpAnswerQuery, mcpQuestionSignal } from './definitions.ts';
import type { McpQuestionRequest } from './types.ts';

const POLL_MS = 300;
const GRACE_MS = 30_000;

export async function askWorkflow(context: Context, request: McpQuestionRequest): Promise<ElicitResult> {
  const workflowId = context.info.workflowExecution?.workflowId;
  if (!workflowId) return { action: 'decline' };
  const handle = context.client.workflow.getHandle(workflowId);
  await handle.signal(mcpQuestionSignal, request);
  const giveUp = Date.now() + request.deadlineMs + GRACE_MS;
  while (Date.now() < giveUp && !context.cancellationSignal.aborted) {
    context.heartbeat();
    const answer = await handle.query(mcpAnswerQuery, request.requestId).catch(() => null);
    if (answer)
      return answer.action === 'accept'
        ? { action: 'accept', content: (answer.content ?? {}) as ElicitResult['content'] }
        : { action: answer.action };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return { action: 'cancel' };
}
