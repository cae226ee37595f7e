// The agents a process runs, as one value built at its composition root and passed down: the API, the
// worker, the activities and the workflows read agents from it and import none. Plain data and pure
// functions (zod, no I/O), so the workflow bundle builds it too. Building it checks what agents must not
// share: a name, a tool (tools are run by name), a pending kind or an event type.
import type { AgentSpec } from './agent-spec.ts';
import { RUNTIME_EVENT_TYPES } from './messages.ts';
import { RUNTIME_PENDING_KINDS, type PendingKindSpec } from './pending-kinds.ts';
import type { ToolSpec } from './tool-spec.ts';
import { RUNTIME_TOOLS, runtimeTool } from './runtime-tools.ts';

export interface AgentCatalog {
  /** the agents' specs, in the order the composition root listed them */
  readonly specs: readonly AgentSpec[];
  names(): string[];
  has(name: string): boolean;
  /** the agent's spec; throws for a name the catalog does not hold (callers check untrusted names with has) */
  agent(name: string): AgentSpec;
  findTool(agent: string, tool: string): ToolSpec | undefined;
  /** what a pending item's kind means: the runtime's kinds and the agents' */
  pendingKind(kind: string): PendingKindSpec | undefined;
  pendingKinds(): string[];
  /** every event type: the runtime's and the agents' */
  eventTypes(): string[];
  /** every role an agent checks for (requiredRole, clientRole) */
  roles(): string[];
}

export class AgentCatalogError extends Error {
  override name = 'AgentCatalogError';
}

export function createAgentCatalog(specs: readonly AgentSpec[]): AgentCatalog {
  const byName = new Map<string, AgentSpec>();
  const toolOwner = new Map<string, string>();
  const kinds = new Map<string, PendingKindSpec>(Object.entries(RUNTIME_PENDING_KINDS));
  const events = new Set<string>(RUNTIME_EVENT_TYPES);
  for (const spec of specs) {
    if (byName.has(spec.name)) throw new AgentCatalogError(`Agent "${spec.name}" is listed twice`);
    for (const tool of spec.tools) {
      if (RUNTIME_TOOLS.some((runtime) => runtime.name === tool.name))
        throw new AgentCatalogError(`Tool "${tool.name}" of agent "${spec.name}" is the runtime's`);
      const owner = toolOwner.get(tool.name);
      if (owner) throw new AgentCatalogError(`Tool "${tool.name}" of agent "${spec.name}" is agent "${owner}"'s`);
      toolOwner.set(tool.name, spec.name);
    }
    for (const [kind, row] of Object.entries(spec.pendingKinds ?? {})) {
      if (kinds.has(kind)) throw new AgentCatalogError(`Pending kind "${kind}" of agent "${spec.name}" is taken`);
      kinds.set(kind, row);
    }
    for (const event of Object.keys(spec.events ?? {})) {
      if (events.has(event)) throw new AgentCatalogError(`Event "${event}" of agent "${spec.name}" is taken`);
      events.add(event);
    }
    byName.set(spec.name, spec);
  }
  const roles = [...new Set(specs.flatMap((spec) => [spec.requiredRole, spec.clientRole].filter((role): role is string => !!role)))];
  return {
    specs: [...specs],
    names: () => [...byName.keys()],
    has: (name) => byName.has(name),
    agent(name) {
      const spec = byName.get(name);
      if (!spec) throw new AgentCatalogError(`Unknown agent "${name}"`);
      return spec;
    },
    // the runtime's tools (recall) are every agent's, found after the agent's own
    findTool: (agent, tool) => {
      const spec = byName.get(agent);
      return spec && (spec.tools.find((own) => own.name === tool) ?? runtimeTool(tool));
    },
    pendingKind: (kind) => kinds.get(kind),
    pendingKinds: () => [...kinds.keys()],
    eventTypes: () => [...events],
    roles: () => [...roles],
  };
}
