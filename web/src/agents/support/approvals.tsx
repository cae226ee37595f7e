// What support's approvals touch, laid out to read (agentHome.ts ToolWords.approval): the order a cancel would
// cancel (product, quantity, price, status, customer) and, for a contact change, each changed field's current
// value → its new one. From the item's `preview` (the server's read-only lookup as the item opened); without
// one, what the arguments say.
import type { ReactNode } from 'react';
import { type Row as Args, Fact, isObject, price, text } from '../../resultParts';

const orderOf = (preview: Args | undefined): Args | undefined => (isObject(preview?.order) ? preview.order : undefined);
const customerOf = (preview: Args | undefined): Args | undefined => (isObject(preview?.customer) ? preview.customer : undefined);

/** The order a cancel would cancel, as the server found it when the approval opened. */
export function cancelApproval(args: Args, preview: Args | undefined): ReactNode | undefined {
  const order = orderOf(preview);
  if (!order) return undefined;
  const customer = isObject(order.customer) ? order.customer : undefined;
  const id = text(order.id) || text(args.order_id);
  return (
    <section className="approval-preview" aria-label={`Order ${id} to cancel`}>
      <h3>Order {id}</h3>
      <dl className="facts">
        <Fact term="Product">{text(order.product)}</Fact>
        <Fact term="Quantity">{text(order.quantity)}</Fact>
        <Fact term="Price">{price(order.price)}</Fact>
        <Fact term="Status">{text(order.status)}</Fact>
        <Fact term="Customer">{customer ? `${text(customer.name)}${customer.id ? ` (customer ${text(customer.id)})` : ''}` : ''}</Fact>
      </dl>
    </section>
  );
}

export function cancelApproved(args: Args, preview: Args | undefined): string | undefined {
  const order = orderOf(preview);
  if (!order) return undefined;
  const customer = isObject(order.customer) ? ` for ${text(order.customer.name)}` : '';
  return `${text(order.product)} × ${text(order.quantity) || '1'}, ${price(order.price)}${customer}, ${text(order.status).toLowerCase()} when approved`;
}

const CONTACT_FIELDS = [
  ['email', 'Email'],
  ['phone', 'Phone'],
] as const;

/** Each field the change sets: [label, current, new]; current is empty without a preview. */
function contactChanges(args: Args, preview: Args | undefined): [string, string, string][] {
  const customer = customerOf(preview);
  return CONTACT_FIELDS.filter(([key]) => args[key] !== undefined && args[key] !== '').map(([key, label]) => [
    label,
    customer ? text(customer[key]) : '',
    text(args[key]),
  ]);
}

/** Current → new for each field the change sets, under the customer's name. */
export function contactApproval(args: Args, preview: Args | undefined): ReactNode | undefined {
  const customer = customerOf(preview);
  if (!customer) return undefined;
  const changes = contactChanges(args, preview);
  return (
    <section className="approval-preview" aria-label={`Contact details of ${text(customer.name)}`}>
      <h3>
        {text(customer.name)} <span className="muted">(customer {text(customer.id) || text(args.user_id)})</span>
      </h3>
      <table className="changes">
        <caption className="visually-hidden">What changes</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Now</th>
            <th scope="col" aria-hidden="true"></th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {changes.map(([label, current, next]) => (
            <tr key={label} className="change">
              <th scope="row">{label}</th>
              <td className="old">{current || '(none)'}</td>
              <td aria-hidden="true">{' → '}</td>
              <td className="new">{current === next ? `${next} (unchanged)` : next}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function contactApproved(args: Args, preview: Args | undefined): string | undefined {
  const customer = customerOf(preview);
  if (!customer) return undefined;
  const changes = contactChanges(args, preview).map(([label, current, next]) => `${label.toLowerCase()} ${current || '(none)'} → ${next}`);
  return changes.length ? `${text(customer.name)}: ${changes.join(', ')}` : undefined;
}
