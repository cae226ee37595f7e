// The Temporal side of McpTools: the list is a local activity (short, and recorded like any other); a call is
// a regular activity with the server's timeout, heartbeats (a dead worker is noticed in seconds) and its
// bounded attempts.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { McpActivities } from '../mcp/types.ts';
import type { ChatSessionInput } from '../shared/messages.ts';
import type { McpToolsPorts } from './mcp-tools.ts';

export function mcpPorts({ conversationId, userId, agent }: Pick<ChatSessionInput, 'conversationId' | 'userId' | 'agent'>): McpToolsPorts {
  const listing = proxyLocalActivities<McpActivities>({
    startToCloseTimeout: '60s',
    retry: { maximumAttempts: 3, initialInterval: '500ms', maximumInterval: '5s' },
  });
  return {
    list: ({ servers, known }) =>
      listing.mcpListTools.executeWithOptions({ summary: `MCP tools of ${servers.join(', ')}` }, [{ agent, servers, ...(known ? { known } : {}) }]),
    call: (input, tool) => {
      const calls = proxyActivities<McpActivities>({
        startToCloseTimeout: tool.callTimeoutMs + tool.questionDeadlineMs + 10_000,
        heartbeatTimeout: 10_000,
        retry: { maximumAttempts: tool.maxAttempts, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
      });
      return calls.mcpCallTool.executeWithOptions({ summary: `${tool.server}: ${tool.tool} ${JSON.stringify(input.args)}` }, [
        { conversationId, userId, agent, ...input },
      ]);
    },
  };
}
