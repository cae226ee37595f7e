// Support: its tools' approvals are the generic approval card; it adds its tools in words, views of its lookups'
// results (views.tsx), what its approvals touch (approvals.tsx) and what to ask first.
import type { AgentHome } from '../../agentHome';
import { customerView, orderView, ordersView } from './views';
import { cancelApproval, cancelApproved, contactApproval, contactApproved } from './approvals';

type Args = Record<string, unknown>;
const s = (v: unknown) => String(v ?? '');
const customer = (r: Args) =>
  `${s(r.name) || 'the customer'}${r.id ? ` (customer ${s(r.id)})` : ''}${r.email ? `, ${s(r.email)}` : ''}${r.phone ? `, ${s(r.phone)}` : ''}`;
const order = (r: Args) => `Order ${s(r.id)}: ${s(r.quantity) || '1'} × ${s(r.product)}, ${s(r.status).toLowerCase()}`;

export const support: AgentHome = {
  label: 'Support',
  description: 'Looks up customers and orders, and cancels orders or changes contact details once you approve.',
  firstPrompt: 'status of order 24601',
  examples: [
    'look up john@gmail.com',
    'orders for 1213210',
    'status of order 24601',
    'cancel order 13579',
    'update 1213210 phone 555-123-4567',
  ],
  tools: {
    get_user: {
      call: (a) => `Look up the customer with username ${s(a.value)}`,
      result: (r) => (r.id ? `Found ${customer(r)}.` : undefined),
      view: customerView,
    },
    get_user_info: {
      call: (a) => `Look up the customer with ${s(a.key)} ${s(a.value)}`,
      result: (r) => {
        // the profile comes with the customer's orders: one customer found, not one result per order
        const who = r.user_info && typeof r.user_info === 'object' ? (r.user_info as Args) : r.id ? r : undefined;
        if (!who) return undefined;
        const orders = Array.isArray(r.orders) ? r.orders.length : undefined;
        return `Found ${customer(who)}${orders === undefined ? '' : `, with ${orders === 0 ? 'no orders' : orders === 1 ? '1 order' : `${orders} orders`}`}.`;
      },
      view: customerView,
    },
    get_order_by_id: {
      call: (a) => `Look up order ${s(a.order_id)}`,
      result: (r) => (r.id ? `${order(r)}.` : undefined),
      view: orderView,
    },
    get_customer_orders: {
      call: (a) => `List the orders of customer ${s(a.customer_id)}`,
      result: (r) => {
        const orders = Array.isArray(r) ? (r as Args[]) : Array.isArray(r.orders) ? (r.orders as Args[]) : undefined;
        if (!orders) return undefined;
        // the orders themselves are in the table under it (views.tsx): the sentence counts them
        return orders.length === 0 ? 'No orders.' : `${orders.length === 1 ? '1 order' : `${orders.length} orders`}.`;
      },
      view: ordersView,
    },
    cancel_order: {
      call: (a) => `Cancel order ${s(a.order_id)}`,
      result: (r, a) => (r.status === 'Cancelled' ? `Order ${s(a.order_id)} is cancelled.` : undefined),
      approval: cancelApproval,
      approved: cancelApproved,
    },
    update_user_contact: {
      call: (a) =>
        `Change the contact details of customer ${s(a.user_id)}: ${[a.email ? `email ${s(a.email)}` : '', a.phone ? `phone ${s(a.phone)}` : ''].filter(Boolean).join(', ')}`,
      result: (r) => (r.id ? `Contact details saved: ${customer(r)}.` : undefined),
      approval: contactApproval,
      approved: contactApproved,
    },
  },
};
