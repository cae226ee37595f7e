// Every agent's home in the web client, one line each. Generic code imports agents only through this file
// and asks it by agent name, pending kind or card type. An agent of the API's without a home here still
// works: it is shown by its name, with the generic chat and approvals (docs/agents/adding-an-agent.md).
import type { AgentHome, AgentPage, PendingKindHome, ToolWords } from '../agentHome';
import type { AgentName, ConversationView } from '../types';
import { beer } from './beer';
import { recipes } from './recipes';
import { sous } from './sous';
import { support } from './support';

const HOMES: Readonly<Record<AgentName, AgentHome>> = {
  recipes,
  sous,
  beer,
  support,
};

const homes = Object.values(HOMES);

// Maps, not object literals: a card type like "constructor" must find nothing.
function claims<T>(what: string, entries: [string, T][]): Map<string, T> {
  const map = new Map<string, T>();
  for (const [key, value] of entries) {
    // two homes rendering the same kind or card type would make the winner depend on this file's order
    if (map.has(key)) throw new Error(`Two agent homes claim the ${what} "${key}"`);
    map.set(key, value);
  }
  return map;
}

const PENDING_KINDS = claims(
  'pending kind',
  homes.flatMap((home) => Object.entries(home.pendingKinds ?? {}) as [string, PendingKindHome][]),
);
const CARDS = claims(
  'card type',
  homes.flatMap((home) => Object.entries(home.cards ?? {})),
);

function homeOf(agent: string): AgentHome | undefined {
  return Object.hasOwn(HOMES, agent) ? HOMES[agent as AgentName] : undefined;
}

export const agentLabel = (agent: string): string => homeOf(agent)?.label ?? agent;
export const sidePanelFor = (agent: string) => homeOf(agent)?.SidePanel;
export const subtitleFor = (agent: string) => homeOf(agent)?.Subtitle;
export const startFor = (agent: string) => homeOf(agent)?.start;
export const clientPickerFor = (agent: string) => homeOf(agent)?.clientPicker;
export const tabNameFor = (agent: string) => homeOf(agent)?.tabName;
export const pendingKindFor = (kind: string): PendingKindHome | undefined => PENDING_KINDS.get(kind);
export const cardRendererFor = (type: unknown) => (typeof type === 'string' ? CARDS.get(type) : undefined);
export const AGENT_PAGES: readonly AgentPage[] = homes.flatMap((home) => home.pages ?? []);
export const REFRESH_EVENTS: readonly string[] = homes.flatMap((home) => home.refreshOn ?? []);
export const toolWordsFor = (agent: string, tool: string): ToolWords | undefined => {
  const tools = homeOf(agent)?.tools;
  return tools && Object.hasOwn(tools, tool) ? tools[tool] : undefined;
};
export const examplesFor = (view: ConversationView): readonly string[] => {
  const home = homeOf(view.agent);
  return home?.examplesOf?.(view) ?? home?.examples ?? [];
};
/** A home page tile's words: what the agent does and what to ask it first. */
export const tileFor = (agent: string): { label: string; description: string; firstPrompt?: string } | undefined => {
  const home = homeOf(agent);
  return home && { label: home.label, description: home.description, firstPrompt: home.firstPrompt ?? home.examples?.[0] };
};
