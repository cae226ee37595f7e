// The agents, one line each. Everything generic (the workflow, the model step, the API) reads an agent
// from here; the agent's server side (routes, activities, tool implementations) is listed in
// server-registry.ts and its workflows in workflows.ts. Plain data, so the workflow bundle imports it.
import type { AgentSpec } from '../shared/agent-spec.ts';
import { type AgentName, EventType, PendingKind } from '../shared/messages.ts';
import { RUNTIME_PENDING_KINDS, type PendingKindSpec } from '../shared/pending-kinds.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import { beerAgent } from './beer/spec.ts';
import { recipesAgent } from './recipes/spec.ts';
import { sousAgent } from './sous/spec.ts';
import { supportAgent } from './support/spec.ts';

const BUILT_IN = [recipesAgent, sousAgent, beerAgent, supportAgent] as const;

declare module '../shared/messages.ts' {
  // AgentName is the union of the list's names (a test agent adds its own by the same augmentation).
  interface AgentNames extends Record<(typeof BUILT_IN)[number]['name'], true> {}
}

/** Every registered agent by name (the built-in ones, then any registerAgent added). */
export const AGENT_SPECS = {} as Record<AgentName, AgentSpec>;

/** What each kind of pending item means: the runtime's kinds and the ones agents bring. */
export const PENDING_KINDS_SPEC = { ...RUNTIME_PENDING_KINDS } as Record<PendingKind, PendingKindSpec>;

/** Event types agents have claimed (AgentSpec.events), so two agents never write the same one. */
const AGENT_EVENTS = new Set<string>();

/**
 * Adds an agent. Called for the list above when this module loads; a test calls it for an agent of its
 * own, in every process that needs it (the workflow bundle's entry, the API, the worker) before use.
 */
export function registerAgent(spec: AgentSpec): void {
  if (Object.hasOwn(AGENT_SPECS, spec.name)) throw new Error(`Agent "${spec.name}" is already registered`);
  const tools = new Set(Object.values(AGENT_SPECS).flatMap((agent) => agent.tools.map((tool: ToolSpec) => tool.name)));
  // Tools are run by name (runTool), so a name means one tool across agents.
  for (const tool of spec.tools)
    if (tools.has(tool.name)) throw new Error(`Tool "${tool.name}" of agent "${spec.name}" is another agent's`);
  // The names are the wire's vocabulary (PendingItem.kind, the events' type), validated and documented in
  // src/shared/messages.ts: a new one is added there too, or the agent fails here, at load, not in a turn.
  for (const name of Object.keys(spec.pendingKinds ?? {})) {
    if (!(PendingKind.options as readonly string[]).includes(name))
      throw new Error(`Pending kind "${name}" of agent "${spec.name}" is not in PENDING_KINDS`);
  }
  for (const name of spec.events ?? []) {
    if (!(EventType.options as readonly string[]).includes(name))
      throw new Error(`Event "${name}" of agent "${spec.name}" is not in EVENT_TYPES`);
  }
  for (const [kind, row] of Object.entries(spec.pendingKinds ?? {})) {
    if (Object.hasOwn(PENDING_KINDS_SPEC, kind)) throw new Error(`Pending kind "${kind}" of agent "${spec.name}" is taken`);
    (PENDING_KINDS_SPEC as Record<string, PendingKindSpec>)[kind] = row;
  }
  for (const event of spec.events ?? []) {
    if (AGENT_EVENTS.has(event)) throw new Error(`Event "${event}" of agent "${spec.name}" is taken`);
    AGENT_EVENTS.add(event);
  }
  (AGENT_SPECS as Record<string, AgentSpec>)[spec.name] = spec;
}

for (const spec of BUILT_IN) registerAgent(spec);

export const agentNames = (): AgentName[] => Object.keys(AGENT_SPECS) as AgentName[];

export const isAgentName = (name: string): name is AgentName => Object.hasOwn(AGENT_SPECS, name);

export function findTool(agent: AgentName, name: string): ToolSpec | undefined {
  return AGENT_SPECS[agent]?.tools.find((tool) => tool.name === name);
}

/** Every role an agent checks for (requiredRole, clientRole): what the dev token is given, to try them all. */
export function agentRoles(): string[] {
  return [
    ...new Set(Object.values(AGENT_SPECS).flatMap((spec) => [spec.requiredRole, spec.clientRole].filter((role): role is string => !!role))),
  ];
}
