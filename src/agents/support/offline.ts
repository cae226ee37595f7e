// The offline model's phrasings for the support agent's tools. Values pass through as typed (a malformed
// phone stays malformed): the runtime validates, as with Gemini.
import type { AgentOffline } from '../../model/offline-types.ts';
import type { JsonObject } from '../../shared/messages.ts';

const PREFIX = String.raw`(?:the\s+)?(?:customer\s+|user\s+)?(?:with\s+(?:the\s+)?(?:email|phone|username)\s+)?`;

/** Tried after the beer finder's and the recipes' phrasings; order within: "cancel order 1" is not a status question, "orders for" is not "order". */
const RANK = 40;

export const supportOffline: AgentOffline = {
  phrases: [
    { tool: 'cancel_order', examples: ['cancel order 13579', 'cancel 13579'] },
    { tool: 'get_order_by_id', examples: ['status of order 24601', 'order 24601'] },
    { tool: 'get_customer_orders', examples: ['orders for 1213210', 'orders of customer 1213210'] },
    {
      tool: 'update_user_contact',
      examples: ['update 1213210 phone 555-123-4567', 'change email of 1213210 to a@b.com'],
    },
    {
      tool: 'get_user_info',
      examples: ['look up john@gmail.com', 'find johndoe', 'who is 123-456-7890', 'everything about johndoe'],
    },
    { tool: 'get_user', examples: ['get user johndoe'] },
  ],
  rules: [
    { rank: RANK, tool: 'update_user_contact', match: matchContactUpdate },
    { rank: RANK, tool: 'cancel_order', match: capture(/\bcancel(?:\s+(?:the\s+)?order)?\s+#?(\d+)\b/i, 'order_id') },
    {
      rank: RANK,
      tool: 'get_customer_orders',
      match: capture(/\borders\s+(?:for|of)\s+(?:the\s+)?(?:customer\s+|user\s+)?#?(\d+)\b/i, 'customer_id'),
    },
    { rank: RANK, tool: 'get_order_by_id', match: capture(/\border\s+(?:#|number\s+|no\.?\s*|id\s+)?(\d+)\b/i, 'order_id') },
    { rank: RANK, tool: 'get_user', match: lookup(new RegExp(String.raw`\bget\s+user\s+${PREFIX}(\S+)`, 'i')) },
    {
      rank: RANK,
      tool: 'get_user_info',
      match: lookup(new RegExp(String.raw`\b(?:look\s*up|find|who\s+is|everything\s+about|search\s+for)\s+${PREFIX}(\S+)`, 'i')),
    },
  ],
};

function capture(pattern: RegExp, field: string): (text: string) => JsonObject | undefined {
  return (text) => {
    const value = pattern.exec(text)?.[1];
    return value ? { [field]: value } : undefined;
  };
}

function lookup(pattern: RegExp): (text: string) => JsonObject | undefined {
  return (text) => {
    const value = clean(pattern.exec(text)?.[1] ?? '');
    return value ? { key: keyOf(value), value } : undefined;
  };
}

/** Which field a lookup value is, from its shape. */
export function keyOf(value: string): 'email' | 'phone' | 'username' {
  if (value.includes('@')) return 'email';
  if (/^\+?[\d\s().-]+$/.test(value) && value.replace(/\D/g, '').length >= 7) return 'phone';
  return 'username';
}

const FILLERS = new Set([
  'number',
  'no',
  'no.',
  'to',
  'of',
  'for',
  'customer',
  'user',
  'the',
  'is',
  'as',
  'new',
  'id',
  'address',
  '=',
  ':',
]);

function matchContactUpdate(text: string): JsonObject | undefined {
  if (!/\b(?:update|change|set|edit)\b/i.test(text)) return undefined;
  const userId = /\b(\d{7})\b/.exec(text)?.[1];
  if (!userId) return undefined;
  const tokens = text.split(/\s+/).map(clean).filter(Boolean);
  const email = tokens.find((token) => token.includes('@')) ?? valueAfter(tokens, 'email', userId);
  const phone =
    valueAfter(tokens, 'phone', userId) ?? tokens.find((token) => token !== userId && keyOf(token) === 'phone' && !token.includes('@'));
  if (email === undefined && phone === undefined) return undefined;
  return { user_id: userId, ...(email !== undefined ? { email } : {}), ...(phone !== undefined ? { phone } : {}) };
}

/** The first word after `keyword` that is not filler, another field's name or the customer id. */
function valueAfter(tokens: string[], keyword: string, userId: string): string | undefined {
  const start = tokens.findIndex((token) => token.toLowerCase().replace(/:$/, '') === keyword);
  if (start < 0) return undefined;
  for (const token of tokens.slice(start + 1)) {
    const lower = token.toLowerCase();
    if (FILLERS.has(lower) || token === userId || token.startsWith(`${userId}'`)) continue;
    if (lower === 'and' || lower === 'email' || lower === 'phone') return undefined;
    return token;
  }
  return undefined;
}

function clean(token: string): string {
  return token.replace(/^["'(<]+/, '').replace(/[.,;!?)"'>]+$/, '');
}
