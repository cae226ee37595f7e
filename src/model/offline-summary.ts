// The offline model's reading of tool results: one plain line per result. An agent reads its own tools'
// results (AgentServer.offline.describe); any other reads by shape (message, list, error, rejection).
import type { ChatMessage } from '../shared/messages.ts';
import type { OfflineAgents } from './offline-types.ts';

type Obj = Record<string, unknown>;

export function summariseResult(agents: OfflineAgents, message: ChatMessage): string {
  const tool = message.tool ?? 'the tool';
  const result = message.result;
  if (isObject(result) && result.status === 'rejected') {
    const reason = text(result.reason) ?? text(result.error) ?? 'no reason given';
    return `Not done: ${reason}`;
  }
  if (isObject(result) && result.error !== undefined) return `That did not work: ${text(result.error) ?? json(result.error)}`;
  if (result === undefined) return message.text || `${tool} returned nothing.`;
  return describe(agents, result, message.tool) ?? `${tool} returned ${json(result)}`;
}

function describe(agents: OfflineAgents, value: unknown, tool?: string): string | undefined {
  // the tool's own reading first (its agent's offline.describe), then the result's shape
  const own = tool ? toolReading(agents, tool)?.(value) : undefined;
  if (own) return own;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length === 0 ? 'No results.' : `${value.length} results: ${json(value)}`;
  if (isObject(value) && typeof value.message === 'string') return value.message;
  return undefined;
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function json(value: unknown): string {
  const out = JSON.stringify(value) ?? String(value);
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
}

/** The agent's own reading of `tool`'s results (AgentServer.offline.describe), if it has one. */
function toolReading({ servers }: OfflineAgents, tool: string): ((value: unknown) => string | undefined) | undefined {
  for (const server of servers) {
    const reading = server.offline?.describe?.[tool];
    if (reading) return reading;
  }
  return undefined;
}
