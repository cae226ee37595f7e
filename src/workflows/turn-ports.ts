// What the turn loop is given to act through: the SDK's own functions and the conversation's activities, so its
// commands and their order are the workflow's. The one object the turn driver depends on.
import { CancellationScope, condition, log, setCurrentDetails, uuid4 } from '@temporalio/workflow';
import type { ChatSessionInput } from '../shared/messages.ts';
import { summaryLine } from '../shared/payload-bounds.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { AgentState } from './agent-state.ts';
import type { ChildRuns } from './child-runs.ts';
import type { EventLog } from './event-log.ts';
import { userFacingReason } from './failure-text.ts';
import type { McpTools } from './mcp-tools.ts';
import type { PendingItems } from './pending-items.ts';
import { modelSteps } from './model-steps.ts';
import type { SessionActivities } from './session-activities.ts';
import type { ModelRequest, TurnLoopPorts } from './turn-loop.ts';
import type { ModelStepResult } from '../activities/runtime-types.ts';
import type { Compaction } from './compaction.ts';

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
  compaction: Compaction;
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
  compaction,
}: TurnPortsInput): TurnLoopPorts {
  const { conversationId, userId, agent, settings } = input;
  // One scope serves turn after turn until a Stop cancels it: a scope of its own per turn cost three promises a
  // turn (each with the stack trace the SDK records for it) and one more handler on the root scope.
  let scope: CancellationScope | undefined;
  const runModelStep = modelSteps(activities, (result) => compaction.note(result));
  return {
    settings,
    pending,
    events,
    agent: agentState,
    tools,
    findTool,
    modelStep: (summary, request) => (mcp.enabled ? mcp.ready().then(() => modelStep(summary, request)) : modelStep(summary, request)),
    runTool: (call, args) =>
      mcp.find(call.name)
        ? mcp.call(call, args)
        : activities.tools.runTool.executeWithOptions({ summary: summaryLine(`${call.name} ${JSON.stringify(args)}`) }, [
            { conversationId, userId, agent, client: input.client, callId: call.id, tool: call.name, args },
          ]),
    runChild: (spec, call, args) => children.run(spec, call, args),
    condition,
    newScope: () => {
      if (!scope || scope.consideredCancelled) scope = new CancellationScope();
      const current = scope;
      return { run: (fn) => current.run(fn), cancel: () => current.cancel() };
    },
    details: setCurrentDetails,
    newId: uuid4,
    logError: (message, attributes) => log.error(message, attributes),
    failureText: userFacingReason,
  };

  function modelStep(
    summary: string,
    { stepId, context, extraSteps, messages, events: newEvents, budget, turnStartedAt, regenerate }: ModelRequest,
  ): Promise<ModelStepResult> {
    return runModelStep(summary, {
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
      ...(regenerate ? { regenerate } : {}),
    });
  }
}
