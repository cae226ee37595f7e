// What support's approvals touch, shown with them (PendingItem.preview, docs/api.md#approval-previews): the
// order a cancel would cancel, the contact details an update would replace. Read-only lookups over the same
// tables as the tools; a person decides on the order, not on its number.
import type { ApprovalPreview } from '../../activities/tool-context.ts';

const cancelOrder: ApprovalPreview = async (args: { order_id: string }, { db }) => {
  const { rows } = await db.query(
    `SELECT o.id, o.product, o.quantity, o.price, o.status, c.id AS customer_id, c.name AS customer_name
       FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE o.id = $1`,
    [args.order_id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    order: {
      id: row.id,
      product: row.product,
      quantity: Number(row.quantity),
      price: Number(row.price),
      status: row.status,
      ...(row.customer_id ? { customer: { id: row.customer_id, name: row.customer_name } } : {}),
    },
  };
};

const updateUserContact: ApprovalPreview = async (args: { user_id: string }, { db }) => {
  const { rows } = await db.query('SELECT id, name, email, phone FROM customers WHERE id = $1', [args.user_id]);
  const row = rows[0];
  return row ? { customer: { id: row.id, name: row.name, email: row.email, phone: row.phone } } : undefined;
};

export const supportPreviews: Readonly<Record<string, ApprovalPreview>> = {
  cancel_order: cancelOrder,
  update_user_contact: updateUserContact,
};
