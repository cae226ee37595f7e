// The agents' server sides, one line each (their specs are in registry.ts): the API mounts their routes
// and reads their create-conversation fields from here; the worker registers their activities and tools.
import type { AgentServer } from '../agent-server.ts';
import type { ToolImplementation } from '../activities/tool-context.ts';
import { setPromptsFolder } from '../model/prompts.ts';
import { AGENT_SPECS } from './registry.ts';
import { beerServer } from './beer/server.ts';
import { recipesServer } from './recipes/server.ts';
import { sousServer } from './sous/server.ts';
import { supportServer } from './support/server.ts';

const BUILT_IN: AgentServer[] = [recipesServer, sousServer, beerServer, supportServer];

/** Every agent's server side, in registry order. */
export const AGENT_SERVERS = new Map<string, AgentServer>();

/** Adds an agent's server side; its spec must be registered first (registerAgent). */
export function registerAgentServer(server: AgentServer): void {
  if (!Object.hasOwn(AGENT_SPECS, server.name)) throw new Error(`Agent "${server.name}" has no spec in the registry`);
  if (AGENT_SERVERS.has(server.name)) throw new Error(`Agent "${server.name}" already has a server side`);
  if (server.prompts) setPromptsFolder(server.name, server.prompts);
  AGENT_SERVERS.set(server.name, server);
}

for (const server of BUILT_IN) registerAgentServer(server);

/** Every tool the worker can run, by name; the agents' specs say which agent may call which. */
export function toolImplementations(): Record<string, ToolImplementation> {
  return Object.assign({}, ...[...AGENT_SERVERS.values()].map((server) => server.implementations ?? {}));
}

/** SessionSettings.agent: every agent's durations (a conversation carries them all, as before). */
export function agentSettings(config: Parameters<NonNullable<AgentServer['settings']>>[0]): Record<string, number> {
  return Object.assign({}, ...[...AGENT_SERVERS.values()].map((server) => server.settings?.(config) ?? {}));
}

/** Runs every agent's onWorkerStart, once per worker. */
export async function startAgentsForWorker(deps: Parameters<NonNullable<AgentServer['onWorkerStart']>>[0]): Promise<void> {
  for (const server of AGENT_SERVERS.values()) await server.onWorkerStart?.(deps);
}
