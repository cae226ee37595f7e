// The Temporal side of McpTools: the list is an activity (it may start a server's process, which must not hold
// a workflow task open, as a local activity would); a call is an activity with the server's timeout,
// heartbeats (a dead worker is noticed in seconds) and its bounded attempts.
import { proxyActivities, setHandler, uuid4 } from '@temporalio/workflow';
import { mcpAnswerQuery, mcpQuestionSignal } from '../mcp/definitions.ts';
import type { McpActivities } from '../mcp/types.ts';
import type { ChatSessionInput } from '../shared/messages.ts';
import { summaryLine } from '../shared/payload-bounds.ts';
import type { EventLog } from './event-log.ts';
import type { McpTools, McpToolsPorts } from './mcp-tools.ts';
import type { PendingItems } from './pending-items.ts';
import type { TurnLoop } from './turn-loop.ts';

export function mcpPorts({ conversationId, userId, agent }: Pick<ChatSessionInput, 'conversationId' | 'userId' | 'agent'>): McpToolsPorts {
  const listing = proxyActivities<McpActivities>({
    startToCloseTimeout: '60s',
    retry: { maximumAttempts: 3, initialInterval: '500ms', maximumInterval: '5s' },
  });
  return {
    list: ({ servers, known }) =>
      listing.mcpListTools.executeWithOptions({ summary: `MCP tools of ${servers.join(', ')}` }, [
        { agent, servers, ...(known ? { known } : {}) },
      ]),
    call: (input, tool) => {
      const calls = proxyActivities<McpActivities>({
        startToCloseTimeout: tool.callTimeoutMs + tool.questionDeadlineMs + 10_000,
        heartbeatTimeout: 10_000,
        retry: { maximumAttempts: tool.maxAttempts, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
      });
      return calls.mcpCallTool.executeWithOptions({ summary: summaryLine(`${tool.server}: ${tool.tool} ${JSON.stringify(input.args)}`) }, [
        { conversationId, userId, agent, ...input },
      ]);
    },
  };
}

/** Elicitations: the call's activity signals a question and polls its answer (src/mcp/definitions.ts). */
export function handleMcpQuestions(
  mcp: McpTools,
  { loop, pending, events }: { loop: TurnLoop; pending: PendingItems; events: EventLog },
): void {
  if (!mcp.enabled) return;
  mcp.attachQuestions({
    park: (item, deadlineMs, onTimeout) => loop.ask(item, deadlineMs, onTimeout),
    cancel: (id, reason) => {
      const decision = pending.cancelUnanswered(id, reason);
      if (decision) loop.decided(decision);
    },
    now: Date.now,
  });
  setHandler(
    mcpQuestionSignal,
    (request) => {
      const refused = mcp.ask(request);
      // Like any bad signal: recorded, never fatal.
      if (refused) events.signalRejected(`signal-rejected:${uuid4()}`, refused, request);
    },
    { description: "From an MCP call's activity: the server asks the user something (elicitation); opens a pending question." },
  );
  setHandler(mcpAnswerQuery, (requestId) => mcp.answer(requestId), {
    description: 'The answer to an MCP question, once the user gave it (or null).',
  });
}
