// The support agent's six tools over the customers and orders of migrations/002_support.sql. Their results
// and error texts are the agent's contract (docs/agents/support.md): clients match them word for word.
// Contract errors are results ({ error, ... }); only infrastructure failures throw. Every query runs on
// context.db, already inside the runtime's transaction as brigade_app, so a tool's effect commits together
// with the record of its call.
//
// Where the contract is silent:
// - get_user / get_user_info: email is matched case-insensitively (the same rule as its uniqueness);
//   phone and username exactly; the value is trimmed for matching, quoted as given in the error.
//   Phone is not unique: if two customers share one, the lowest id wins (deterministic).
// - get_customer_orders: an unknown customer is an error (`Couldn't find a user with id of …`), not an
//   empty array, so that the model can tell "no such customer" from "no orders yet". Orders come
//   ordered by id (the table holds no order date), the same in get_user_info.
// - update_user_contact: an unknown user wins over an email in use; a customer may re-set their own
//   email (in any case); the email is stored as given (trimmed), compared lower-cased.
import type pg from 'pg';
import type { ToolImplementation, ToolImplementations } from '../../activities/tool-context.ts';
import type { supportTools } from './tools.ts';

/** A tool's implementation, its arguments typed by the tool's schema. */
type Implementation<Name extends keyof ToolImplementations<typeof supportTools>> = ToolImplementations<typeof supportTools>[Name];

type LookupKey = 'email' | 'phone' | 'username';

interface Customer {
  id: string;
  name: string;
  email: string;
  phone: string;
  username: string;
}

interface Order {
  id: string;
  customer_id: string;
  product: string;
  quantity: number;
  price: number;
  status: string;
}

const CUSTOMER_COLUMNS = 'id, name, email, phone, username';
const ORDER_COLUMNS = 'id, customer_id, product, quantity, price, status';

// A fixed map from the schema's enum to SQL: the column is never taken from the arguments.
const LOOKUP_WHERE: Record<LookupKey, string> = {
  email: 'lower(email) = lower($1)',
  phone: 'phone = $1',
  username: 'username = $1',
};

const EMAIL_INDEX = 'customers_email_lower_key';
const EMAIL_IN_USE = { error: 'Email already in use by another customer' } as const;
const ORDER_NOT_FOUND = { error: 'Order not found' } as const;

const userNotFound = (key: string, value: string) => ({ error: `Couldn't find a user with ${key} of ${value}` });

const toCustomer = (row: any): Customer => ({
  id: row.id,
  name: row.name,
  email: row.email,
  phone: row.phone,
  username: row.username,
});

// NUMERIC arrives as a string unless src/db/pool.ts's parser is installed: a number either way (79.99).
const toOrder = (row: any): Order => ({
  id: row.id,
  customer_id: row.customer_id,
  product: row.product,
  quantity: Number(row.quantity),
  price: Number(row.price),
  status: row.status,
});

async function findCustomer(db: pg.ClientBase, key: LookupKey, value: string): Promise<Customer | undefined> {
  const where = LOOKUP_WHERE[key];
  if (!where) throw new Error(`unknown lookup key: ${String(key)}`);
  const { rows } = await db.query(`SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE ${where} ORDER BY id LIMIT 1`, [value.trim()]);
  return rows[0] ? toCustomer(rows[0]) : undefined;
}

async function customerById(db: pg.ClientBase, id: string): Promise<Customer | undefined> {
  const { rows } = await db.query(`SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE id = $1`, [id]);
  return rows[0] ? toCustomer(rows[0]) : undefined;
}

async function ordersOf(db: pg.ClientBase, customerId: string): Promise<Order[]> {
  const { rows } = await db.query(`SELECT ${ORDER_COLUMNS} FROM orders WHERE customer_id = $1 ORDER BY id`, [customerId]);
  return rows.map(toOrder);
}

const getUser: Implementation<'get_user'> = async (args, context) => {
  const customer = await findCustomer(context.db, args.key, args.value);
  return customer ?? userNotFound(args.key, args.value);
};

const getOrderById: Implementation<'get_order_by_id'> = async (args, context) => {
  // Named: the busiest lookup is parsed and planned once per pooled connection.
  const { rows } = await context.db.query({
    name: 'support.order_by_id',
    text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`,
    values: [args.order_id],
  });
  return rows[0] ? toOrder(rows[0]) : ORDER_NOT_FOUND;
};

const getCustomerOrders: Implementation<'get_customer_orders'> = async (args, context) => {
  const { rows } = await context.db.query('SELECT 1 FROM customers WHERE id = $1', [args.customer_id]);
  if (rows.length === 0) return userNotFound('id', args.customer_id);
  return ordersOf(context.db, args.customer_id);
};

// Why an order that is not Processing cannot be cancelled, in the contract's words.
const CANNOT_CANCEL: Record<string, { error: string; status: string }> = {
  Shipped: { error: "Order has already shipped. Can't cancel it.", status: 'Shipped' },
  Delivered: { error: "Order has already been delivered. Can't cancel it.", status: 'Delivered' },
  Cancelled: { error: 'Order is already cancelled.', status: 'Cancelled' },
};

const cancelOrder: Implementation<'cancel_order'> = async (args, context) => {
  // One statement decides: of two concurrent cancels, the second waits on the row lock, re-checks
  // status = 'Processing' against the committed row and updates nothing.
  const cancelled = await context.db.query("UPDATE orders SET status = 'Cancelled' WHERE id = $1 AND status = 'Processing' RETURNING id", [
    args.order_id,
  ]);
  if (cancelled.rowCount === 1) {
    return { status: 'Cancelled', message: `Order ${args.order_id} has been successfully cancelled` };
  }
  const { rows } = await context.db.query('SELECT status FROM orders WHERE id = $1', [args.order_id]);
  const status: string | undefined = rows[0]?.status;
  if (status === undefined) return ORDER_NOT_FOUND;
  const reason = CANNOT_CANCEL[status];
  // 'Processing' here would mean the row changed between the two statements and back: not for us to guess.
  if (!reason) throw new Error(`order ${args.order_id} could not be cancelled from status ${status}`);
  return reason;
};

const isEmailConflict = (error: unknown): boolean =>
  typeof error === 'object' &&
  error !== null &&
  (error as { code?: string }).code === '23505' &&
  (error as { constraint?: string }).constraint === EMAIL_INDEX;

const UPDATED = 'User information updated successfully';

const updateUserContact: Implementation<'update_user_contact'> = async (args, context) => {
  const db = context.db;
  const email = args.email?.trim();
  const phone = args.phone?.trim();
  if (email === undefined && phone === undefined) {
    // The schema refuses this already; a result, not a throw, if a caller skipped it.
    return { error: 'Provide an email or a phone number to update' };
  }
  if (email === undefined) {
    // A phone alone touches no unique column: one UPDATE, whose missing row says the user is unknown (a
    // check, a savepoint and its release were three round trips more in the approval's transaction).
    const { rows } = await db.query(`UPDATE customers SET phone = $2 WHERE id = $1 RETURNING ${CUSTOMER_COLUMNS}`, [args.user_id, phone]);
    return rows[0] ? { ...toCustomer(rows[0]), message: UPDATED } : userNotFound('id', args.user_id);
  }
  if (!(await customerById(db, args.user_id))) return userNotFound('id', args.user_id);

  if (email !== undefined) {
    const { rows } = await db.query('SELECT 1 FROM customers WHERE lower(email) = lower($1) AND id <> $2', [email, args.user_id]);
    if (rows.length > 0) return EMAIL_IN_USE;
  }

  // A concurrent writer may take the address between the check and the update: the unique index then
  // refuses it (23505). The savepoint keeps the runtime's transaction usable for recording the result.
  await db.query('SAVEPOINT update_user_contact');
  let updated: pg.QueryResult;
  try {
    updated = await db.query(
      `UPDATE customers SET email = coalesce($2, email), phone = coalesce($3, phone)
        WHERE id = $1 RETURNING ${CUSTOMER_COLUMNS}`,
      [args.user_id, email ?? null, phone ?? null],
    );
  } catch (error) {
    // If even the rollback fails (connection lost), the original error is the one worth retrying on.
    await db.query('ROLLBACK TO SAVEPOINT update_user_contact; RELEASE SAVEPOINT update_user_contact').catch(() => {
      throw error;
    });
    if (isEmailConflict(error)) return EMAIL_IN_USE;
    throw error;
  }
  await db.query('RELEASE SAVEPOINT update_user_contact');
  if (!updated.rows[0]) return userNotFound('id', args.user_id);
  return { ...toCustomer(updated.rows[0]), message: UPDATED };
};

const getUserInfo: Implementation<'get_user_info'> = async (args, context) => {
  const customer = await findCustomer(context.db, args.key, args.value);
  if (!customer) return userNotFound(args.key, args.value);
  return { user_info: customer, orders: await ordersOf(context.db, customer.id) };
};

const implementations: ToolImplementations<typeof supportTools> = {
  get_user: getUser,
  get_order_by_id: getOrderById,
  get_customer_orders: getCustomerOrders,
  cancel_order: cancelOrder,
  update_user_contact: updateUserContact,
  get_user_info: getUserInfo,
};

/** The same, by any name (runTool looks a tool up by the name the model used). */
export const supportImplementations: Readonly<Record<string, ToolImplementation>> = implementations;
