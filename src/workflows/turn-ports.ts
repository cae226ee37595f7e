// What the turn loop is given to act through: the SDK's own functions and the conversation's activities, so its
// commands and their order are the workflow's. The one object the turn driver depends on.
import { CancellationScope, condition, log, patched, setCurrentDetails, uuid4 } from '@temporalio/workflow';
import type { ChatSessionInput } from '../shared/messages.ts';
import { summaryLine } from '../shared/payload-bounds.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { AgentState } from './agent-state.ts';
import type { ChildRuns } from './child-runs.ts';
import type { EventLog } from './event-log.ts';
import { userFacingReason } from './failure-text.ts';
import type { McpTools } from './mcp-tools.ts';
import type { PendingItems } from './pending-items.ts';
import { MODEL_STEP_IN_TASK, type SessionActivities } from './session-activities.ts';
import type { TurnLoopPorts } from './turn-loop.ts';

export interface TurnPortsInput {
  input: ChatSessionInput;
  /** the agent's own tools, and a tool by name (the agent's, then its MCP servers') */
  tools: readonly ToolSpec[];
  findTool(name: string): ToolSpec | undefined;
  activities: SessionActivities;
  mcp: McpTools;
  children: ChildRuns;
  pending: PendingItems;
  events: EventLog;
  agentState: AgentState;
}

export function turnPorts({
  input,
  tools,
  findTool,
  activities,
  mcp,
  children,
  pending,
  events,
  agentState,
}: TurnPortsInput): TurnLoopPorts {
  const { conversationId, userId, agent, settings } = input;
  return {
    settings,
    pending,
    events,
    agent: agentState,
    tools,
    findTool,
    modelStep: async (summary, { stepId, context, extraSteps, messages, events: newEvents, budget, turnStartedAt }) => {
      if (mcp.enabled) await mcp.ready();
      const model = patched(MODEL_STEP_IN_TASK) ? activities.modelInTask : activities.model;
      return model.modelStep.executeWithOptions({ summary }, [
        {
          conversationId,
          userId,
          agent,
          stepId,
          ...(context ? { context } : {}),
          ...(extraSteps ? { inline: { extraSteps, ...(input.client ? { client: input.client } : {}) } } : {}),
          messages,
          events: newEvents,
          ...(budget ? { budget } : {}),
          ...(mcp.declarations().length ? { mcpTools: mcp.declarations() } : {}),
          turnStartedAt,
        },
      ]);
    },
    runTool: (call, args) =>
      mcp.find(call.name)
        ? mcp.call(call, args)
        : activities.tools.runTool.executeWithOptions({ summary: summaryLine(`${call.name} ${JSON.stringify(args)}`) }, [
            { conversationId, userId, agent, client: input.client, callId: call.id, tool: call.name, args },
          ]),
    runChild: (spec, call, args) => children.run(spec, call, args),
    condition,
    newScope: () => {
      const scope = new CancellationScope();
      return { run: (fn) => scope.run(fn), cancel: () => scope.cancel() };
    },
    details: setCurrentDetails,
    newId: uuid4,
    logError: (message, attributes) => log.error(message, attributes),
    failureText: userFacingReason,
  };
}
