// The support agent's six tools, names and argument schemas exactly as the support contract fixes them (docs/agents/support.md).
import { z } from 'zod';
import { AUTO, NEEDS_APPROVAL, defineTool } from '../../shared/tool-spec.ts';

const lookupKey = z.enum(['email', 'phone', 'username']).describe('The field to search by (email, phone, or username)');
const orderId = z
  .string()
  .regex(/^\d{5}$/, 'must be a 5-digit order ID')
  .describe('The 5-digit order ID');
const customerId = z
  .string()
  .regex(/^\d{7}$/, 'must be a 7-digit customer ID')
  .describe('The 7-digit customer ID');

export const getUser = defineTool({
  name: 'get_user',
  description:
    "Retrieves customer information by searching with email, phone, or username. Returns the customer's full profile including ID, name, email, phone, and username.",
  args: z.object({ key: lookupKey, value: z.string().min(1).describe('The value to search for in the specified field') }),
  policy: AUTO,
});

export const getOrderById = defineTool({
  name: 'get_order_by_id',
  description:
    'Retrieves order details by order ID. Returns order information including customer ID, product, quantity, price, and current status.',
  args: z.object({ order_id: orderId }),
  policy: AUTO,
});

export const getCustomerOrders = defineTool({
  name: 'get_customer_orders',
  description: 'Retrieves all orders associated with a customer ID. Returns an array of order objects.',
  args: z.object({ customer_id: customerId }),
  policy: AUTO,
});

export const cancelOrder = defineTool({
  name: 'cancel_order',
  description:
    "Cancels an order by changing its status to 'Cancelled'. Only works if the order status is currently 'Processing'. Returns an error if the order has already shipped or been delivered.",
  args: z.object({ order_id: orderId.describe('The 5-digit order ID to cancel') }),
  policy: NEEDS_APPROVAL,
});

export const updateUserContact = defineTool({
  name: 'update_user_contact',
  description:
    "Updates a customer's contact information (email and/or phone number). At least one field must be provided. Returns the updated customer profile.",
  args: z
    .object({
      user_id: customerId,
      email: z.email('must be an email address').optional().describe('New email address (optional)'),
      phone: z
        .string()
        .regex(/^\d{3}-\d{3}-\d{4}$/, 'must be a phone number in format XXX-XXX-XXXX')
        .optional()
        .describe('New phone number in format XXX-XXX-XXXX (optional)'),
    })
    .refine((args) => args.email !== undefined || args.phone !== undefined, {
      message: 'at least one of email or phone must be given besides user_id',
    }),
  policy: NEEDS_APPROVAL,
});

export const getUserInfo = defineTool({
  name: 'get_user_info',
  description:
    'Retrieves comprehensive customer information including their profile and all associated orders. This is a convenience method that combines get_user and get_customer_orders.',
  args: z.object({ key: lookupKey, value: z.string().min(1).describe('The value to search for in the specified field') }),
  policy: AUTO,
});

export const supportTools = [getUser, getOrderById, getCustomerOrders, cancelOrder, updateUserContact, getUserInfo];
