// The offline model's phrasebook: every agent's phrasings (AgentServer.offline), each turned into one
// call's arguments. The runtime validates the arguments, as with Gemini.
import type { JsonObject } from '../shared/messages.ts';
import type { OfflineAgents, OfflinePhrase, OfflineRule } from './offline-types.ts';

export type { OfflinePhrase } from './offline-types.ts';

const agentsOffline = ({ servers }: OfflineAgents) => servers.flatMap((server) => (server.offline ? [server.offline] : []));

/** What the offline model understands, for the README and for its own help text. */
export const offlinePhrases = (agents: OfflineAgents): readonly OfflinePhrase[] =>
  agentsOffline(agents).flatMap((offline) => offline.phrases ?? []);

export interface Intent {
  /** the tool to call */
  name: string;
  args: JsonObject;
}

/** Every agent's rules by rank (a stable sort: ties keep the catalog's order). */
const rules = (agents: OfflineAgents): readonly OfflineRule[] =>
  agentsOffline(agents)
    .flatMap((offline) => offline.rules ?? [])
    .sort((a, b) => a.rank - b.rank);

/**
 * The call the text asks for. The first phrasing that matches decides: when its tool is not offered there is
 * no call, rather than a lesser match ("cancel order 1" must not turn into a status lookup).
 */
export function matchIntent(agents: OfflineAgents, text: string, tools: ReadonlySet<string>): Intent | undefined {
  for (const rule of rules(agents)) {
    const args = rule.match(text);
    if (args) return tools.has(rule.tool) ? { name: rule.tool, args } : undefined;
  }
  return undefined;
}
