// How the offline model reads the support tools' results aloud: customers, orders, and a customer with
// their orders (AgentServer.offline.describe, by tool name).
type Obj = Record<string, unknown>;

const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
const isCustomer = (value: Obj) => typeof value.name === 'string' && (value.email !== undefined || value.username !== undefined);
const isOrder = (value: unknown) => isObject(value) && value.product !== undefined && value.status !== undefined;

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

function describeOrders(items: unknown[]): string | undefined {
  if (items.length === 0) return 'No orders found.';
  if (!items.every(isOrder)) return undefined;
  const noun = items.length === 1 ? 'order' : 'orders';
  return `${items.length} ${noun}: ${(items as Obj[]).map((order) => `${order.id} ${order.product} (${order.status})`).join('; ')}.`;
}

/** Any support tool's result, read by its shape. */
function describeSupportResult(value: unknown): string | undefined {
  if (Array.isArray(value)) return describeOrders(value);
  if (!isObject(value)) return undefined;
  if (isObject(value.user_info) && Array.isArray(value.orders))
    return `${describeCustomer(value.user_info)} ${describeOrders(value.orders) ?? ''}`.trim();
  if (isCustomer(value)) {
    const customer = describeCustomer(value);
    return typeof value.message === 'string' ? `${value.message}. ${customer}` : customer;
  }
  if (isOrder(value)) return describeOrder(value);
  return undefined;
}

export const supportReadings = Object.fromEntries(
  ['get_user_info', 'get_user', 'get_order_by_id', 'get_customer_orders', 'cancel_order', 'update_user_contact'].map((tool) => [
    tool,
    describeSupportResult,
  ]),
);
