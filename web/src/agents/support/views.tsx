// Support's results laid out to read: a customer card with their orders, an orders table, one order's card.
// Only what a person asks about is shown: the customer number, never the other ids (username, order's
// customer_id) a lookup also returns. A shape these do not know returns undefined, so the raw details stay.
import type { ReactNode } from 'react';
import { type Row as Args, Fact, PhoneLink, isObject, price, text } from '../../resultParts';

/** The orders as a table that scrolls sideways inside its own box on a narrow screen, not the page. */
export function OrdersTable({ orders, caption }: { orders: Args[]; caption: string }) {
  if (orders.length === 0) return <p className="muted">No orders.</p>;
  const withPrice = orders.some((o) => price(o.price) !== '');
  return (
    // focusable, so a keyboard can scroll it where it overflows
    <div className="table-scroll" tabIndex={0} role="group" aria-label={caption}>
      <table className="result-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Order</th>
            <th scope="col">Product</th>
            <th scope="col">Quantity</th>
            {withPrice && <th scope="col">Price</th>}
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {orders.map((o, i) => (
            <tr key={text(o.id) || i}>
              <th scope="row">{text(o.id)}</th>
              <td>{text(o.product)}</td>
              <td className="num">{text(o.quantity)}</td>
              {withPrice && <td className="num">{price(o.price)}</td>}
              <td>{text(o.status)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CustomerCard({ customer, orders }: { customer: Args; orders?: Args[] }) {
  const name = text(customer.name) || 'Customer';
  return (
    <article className="card result-card customer-card" aria-label={`Customer ${name}`}>
      <div className="card-body">
        <h3>{name}</h3>
        <dl className="facts">
          <Fact term="Customer number">{text(customer.id)}</Fact>
          <Fact term="Email">{text(customer.email) && <a href={`mailto:${text(customer.email)}`}>{text(customer.email)}</a>}</Fact>
          <Fact term="Phone">{text(customer.phone) && <PhoneLink phone={text(customer.phone)} />}</Fact>
        </dl>
        {orders && <OrdersTable orders={orders} caption={`Orders of ${name}`} />}
      </div>
    </article>
  );
}

/** get_user_info: the profile with its orders; get_user: the profile alone. */
export function customerView(result: unknown): ReactNode | undefined {
  if (!isObject(result)) return undefined;
  if (isObject(result.user_info))
    return <CustomerCard customer={result.user_info} orders={Array.isArray(result.orders) ? result.orders.filter(isObject) : undefined} />;
  return result.id ? <CustomerCard customer={result} /> : undefined;
}

/** get_customer_orders: the customer's orders (an array; `{ orders }` is read too). */
export function ordersView(result: unknown, args: Args): ReactNode | undefined {
  const orders = Array.isArray(result) ? result : isObject(result) && Array.isArray(result.orders) ? result.orders : undefined;
  if (!orders) return undefined;
  const of = text(args.customer_id);
  return <OrdersTable orders={orders.filter(isObject)} caption={of ? `Orders of customer ${of}` : 'Orders'} />;
}

/** get_order_by_id: one order as a card. */
export function orderView(result: unknown): ReactNode | undefined {
  if (!isObject(result) || !result.id) return undefined;
  const id = text(result.id);
  return (
    <article className="card result-card order-card" aria-label={`Order ${id}`}>
      <div className="card-body">
        <h3>Order {id}</h3>
        <dl className="facts">
          <Fact term="Product">{text(result.product)}</Fact>
          <Fact term="Quantity">{text(result.quantity)}</Fact>
          <Fact term="Price">{price(result.price)}</Fact>
          <Fact term="Status">{text(result.status)}</Fact>
          <Fact term="Customer number">{text(result.customer_id)}</Fact>
        </dl>
      </div>
    </article>
  );
}
