// The offline model's reading of tool results: one plain line per result, made from the result's shape
// (customer, order, list, message, error, rejection), so it reads well for any tool, not only support's.
import type { ChatMessage } from '../shared/messages.ts';
import { AGENT_SERVERS } from '../agents/server-registry.ts';

type Obj = Record<string, unknown>;

export function summariseResult(message: ChatMessage): string {
  const tool = message.tool ?? 'the tool';
  const result = message.result;
  if (isObject(result) && result.status === 'rejected') {
    const reason = text(result.reason) ?? text(result.error) ?? 'no reason given';
    return `${tool} was not done: ${reason}`;
  }
  if (isObject(result) && result.error !== undefined) return `${tool} failed: ${text(result.error) ?? json(result.error)}`;
  if (result === undefined) return message.text || `${tool} returned nothing.`;
  return describe(result, message.tool) ?? `${tool} returned ${json(result)}`;
}

function describe(value: unknown, tool?: string): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return describeList(value);
  if (!isObject(value)) return undefined;
  // a tool's own reading first (the recipes agent's rows as saved recipes), then the result's shape
  const own = tool ? toolReading(tool)?.(value) : undefined;
  if (own) return own;
  if (isObject(value.user_info) && Array.isArray(value.orders)) {
    return `${describeCustomer(value.user_info)} ${describeList(value.orders)}`;
  }
  if (isCustomer(value)) {
    const customer = describeCustomer(value);
    return typeof value.message === 'string' ? `${value.message}. ${customer}` : customer;
  }
  if (isOrder(value)) return describeOrder(value);
  const beer = describeBeer(value);
  if (beer) return beer;
  if (typeof value.message === 'string') return value.message;
  return undefined;
}

/** The beer finder's results: a recommendation, a brewery search, a website summary. */
function describeBeer(value: Obj): string | undefined {
  if (typeof value.presentation === 'string') {
    const answer =
      value.answer === 'timeout'
        ? 'No answer came in time, so no details were fetched.'
        : value.answer === 'no'
          ? 'No details requested.'
          : isObject(value.summary)
            ? describeSummary(value.summary)
            : '';
    return `${value.presentation}\n${answer}`.trim();
  }
  if (Array.isArray(value.breweries) && value.status === 'success') {
    const list = (value.breweries as Obj[]).slice(0, 10).map((b, i) => `${i + 1}. ${text(b.brewery_name)} (${text(b.brewery_type)}) - ${text(b.city)}, ${text(b.state)}`);
    const more = value.breweries.length > 10 ? `\n...and ${value.breweries.length - 10} more.` : '';
    return `Found ${value.breweries.length} new ${value.breweries.length === 1 ? 'brewery' : 'breweries'}:\n${list.join('\n')}${more}`;
  }
  if (typeof value.summary === 'string' && typeof value.cache_status === 'string') return describeSummary(value);
  return undefined;
}

function describeSummary(summary: Obj): string {
  if (typeof summary.summary !== 'string') return `No summary of ${text(summary.brewery_name)}: ${text(summary.error) ?? text(summary.status)}.`;
  const cache = { CACHE_HIT: 'from the cache', CACHE_STALE: 'refreshed, the cached one was stale', CACHE_MISS: 'new' }[String(summary.cache_status)] ?? '';
  return `${text(summary.brewery_name)} (${cache}): ${summary.summary}`;
}

function describeList(items: unknown[]): string {
  if (items.length === 0) return 'No orders found.';
  if (items.every(isOrder)) {
    const orders = items as Obj[];
    const noun = items.length === 1 ? 'order' : 'orders';
    return `${items.length} ${noun}: ${orders.map((order) => `${order.id} ${order.product} (${order.status})`).join('; ')}.`;
  }
  return `${items.length} results: ${json(items)}`;
}

function describeCustomer(customer: Obj): string {
  const contact = [
    text(customer.email) && `email ${text(customer.email)}`,
    text(customer.phone) && `phone ${text(customer.phone)}`,
    text(customer.username) && `username ${text(customer.username)}`,
  ].filter(Boolean);
  const id = text(customer.id);
  return `Customer ${id ? `${id}: ` : ''}${text(customer.name) ?? 'unnamed'}${contact.length ? `, ${contact.join(', ')}` : ''}.`;
}

function describeOrder(order: Obj): string {
  const quantity = typeof order.quantity === 'number' ? ` x${order.quantity}` : '';
  const price = typeof order.price === 'number' ? ` at $${order.price.toFixed(2)}` : '';
  return `Order ${text(order.id) ?? '?'}: ${text(order.product)}${quantity}${price}, status ${text(order.status)}.`;
}

function isCustomer(value: Obj): boolean {
  return isObject(value) && typeof value.name === 'string' && (value.email !== undefined || value.username !== undefined);
}

function isOrder(value: unknown): boolean {
  return isObject(value) && value.product !== undefined && value.status !== undefined;
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
function toolReading(tool: string): ((value: Obj) => string | undefined) | undefined {
  for (const server of AGENT_SERVERS.values()) {
    const reading = server.offline?.describe?.[tool];
    if (reading) return reading;
  }
  return undefined;
}
