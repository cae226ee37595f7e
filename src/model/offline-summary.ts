// The offline model's reading of tool results: one plain line per result, made from the result's shape
// (customer, order, list, message, error, rejection), so it reads well for any tool, not only support's.
import type { ChatMessage } from '../shared/messages.ts';
import { describeSqlResult } from './offline-recipes.ts';

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
  return describe(result) ?? `${tool} returned ${json(result)}`;
}

function describe(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return describeList(value);
  if (!isObject(value)) return undefined;
  const sql = describeSqlResult(value);
  if (sql) return sql;
  if (isObject(value.user_info) && Array.isArray(value.orders)) {
    return `${describeCustomer(value.user_info)} ${describeList(value.orders)}`;
  }
  if (isCustomer(value)) {
    const customer = describeCustomer(value);
    return typeof value.message === 'string' ? `${value.message}. ${customer}` : customer;
  }
  if (isOrder(value)) return describeOrder(value);
  if (typeof value.message === 'string') return value.message;
  return undefined;
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
