// The offline model's reading of tool results: one plain line per result. An agent reads its own tools'
// results (AgentServer.offline.describe); any other reads by shape (message, list, error, rejection).
import type { ChatMessage } from '../shared/messages.ts';
import type { OfflineAgents } from './offline-types.ts';

type Obj = Record<string, unknown>;

export function summariseResult(agents: OfflineAgents, message: ChatMessage): string {
  const result = message.result;
  if (isObject(result) && result.status === 'rejected') {
    const reason = text(result.reason) ?? text(result.error) ?? 'no reason given';
    return `Not done: ${reason}`;
  }
  if (isObject(result) && result.error !== undefined) return `That did not work: ${text(result.error) ?? plainReading(result.error)}`;
  if (result === undefined) return message.text || 'Done, with nothing to report.';
  return describe(agents, result, message.tool) ?? plainReading(result);
}

function describe(agents: OfflineAgents, value: unknown, tool?: string): string | undefined {
  // the tool's own reading first (its agent's offline.describe), then the result's shape
  const own = tool ? toolReading(agents, tool)?.(value) : undefined;
  if (own) return own;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length === 0 ? 'No results.' : plainReading(value);
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

// A result no agent reads is said in words a person can read: its facts as "Label: value", lists counted and
// named, ids, SQL and timings left out; never the tool's name or JSON (issue 46, item 5).
const HIDDEN_KEY = /(^|_)(id|uuid|sql|metadata|ms)$|Id$|_at$|At$|^(status|method)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function label(key: string): string {
  const words = key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : key;
}

function itemName(item: unknown): string | undefined {
  if (!isObject(item)) return text(item);
  return text(item.name) ?? text(item.title) ?? text(item.label);
}

function listReading(list: unknown[], noun?: string): string {
  const many = noun ?? 'results';
  const one = many
    .replace(/ies$/, 'y')
    .replace(/(s|x|z|ch|sh)es$/, '$1')
    .replace(/([^s])s$/, '$1');
  const count = list.length === 0 ? `no ${many}` : `${list.length} ${list.length === 1 ? one : many}`;
  const names = list.map(itemName).filter((name): name is string => Boolean(name));
  const shown = names.slice(0, 5).join(', ');
  return names.length ? `${count}: ${shown}${names.length > 5 ? ', …' : ''}` : count;
}

function facts(value: Obj, depth: number, out: string[]): void {
  for (const [key, v] of Object.entries(value)) {
    if (out.length >= 8) return;
    if (HIDDEN_KEY.test(key)) continue;
    const scalar = text(v);
    if (scalar !== undefined) {
      if (scalar.trim() && !UUID.test(scalar)) out.push(`${label(key)}: ${scalar.length > 120 ? `${scalar.slice(0, 119)}…` : scalar}`);
    } else if (Array.isArray(v)) out.push(listReading(v, label(key).toLowerCase()).replace(/^./, (c) => c.toUpperCase()));
    else if (isObject(v) && depth < 1) facts(v, depth + 1, out);
  }
}

export function plainReading(value: unknown): string {
  if (Array.isArray(value)) return `${listReading(value).replace(/^./, (c) => c.toUpperCase())}.`;
  const scalar = text(value);
  if (scalar !== undefined) return scalar;
  if (!isObject(value)) return 'Done.';
  const found: string[] = [];
  facts(value, 0, found);
  return found.length ? `${found.join('; ')}.` : 'Done.';
}

/** The agent's own reading of `tool`'s results (AgentServer.offline.describe), if it has one. */
function toolReading({ servers }: OfflineAgents, tool: string): ((value: unknown) => string | undefined) | undefined {
  for (const server of servers) {
    const reading = server.offline?.describe?.[tool];
    if (reading) return reading;
  }
  return undefined;
}
