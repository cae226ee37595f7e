// Which of a model's tool calls the model step may run itself, without handing the turn back to the
// workflow: every call names a tool of the agent, fits its schema, needs no person and runs as an activity.
// Anything else (an approval, a child workflow, an invalid call) is the workflow's to handle, all calls at once.
import type { AgentCatalog } from './agent-catalog.ts';
import type { AgentName, JsonObject, ToolCall } from './messages.ts';
import { needsApproval } from './tool-spec.ts';

/** The checked arguments of every call, in order; undefined when any call must go through the workflow. */
export function inlineArgs(catalog: AgentCatalog, agent: AgentName, calls: readonly ToolCall[]): JsonObject[] | undefined {
  if (!calls.length) return undefined;
  const checked: JsonObject[] = [];
  for (const call of calls) {
    const spec = catalog.findTool(agent, call.name);
    if (!spec || spec.runner?.kind === 'child') return undefined;
    const parsed = spec.args.safeParse(call.args);
    if (!parsed.success || needsApproval(spec.policy, parsed.data as JsonObject)) return undefined;
    checked.push(parsed.data as JsonObject);
  }
  return checked;
}
