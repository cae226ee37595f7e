// The offline model's phrasebook: a few fixed phrasings per support tool, turned into one call's arguments.
// Values pass through as typed (a malformed phone stays malformed): the runtime validates, as with Gemini.
import { stateName } from '../agents/beer/names.ts';
import type { JsonObject } from '../shared/messages.ts';
import { SAVE_RECIPE_EXAMPLE, matchSaveRecipe } from '../agents/recipes/offline-save.ts';
import { RECIPES_OFFLINE_PHRASES, RECIPES_RULES } from './offline-recipes.ts';

export interface OfflinePhrase {
  tool: string;
  examples: readonly string[];
}

/** What the offline model understands, for the README and for its own help text. */
export const OFFLINE_PHRASES: readonly OfflinePhrase[] = [
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
  { tool: 'recommend_breweries', examples: ['recommend breweries', 'recommend some new breweries'] },
  { tool: 'search_breweries_tool', examples: ['find breweries in San Diego, CA', 'find micro breweries in Bend, OR'] },
  { tool: 'get_website_summary_tool', examples: ['summary of Stone Brewing http://www.stonebrew.com'] },
  { tool: 'get_client_profile_tool', examples: ['my profile', 'who am I'] },
  {
    tool: 'run_analytical_query_tool',
    examples: [
      'how many Budweiser did I buy',
      'my top breweries',
      'my top beers',
      'best-selling beer in California',
      'best-selling beer in Ohio',
      'best-selling beer in the Midwest',
      'what did CLT-CFY747 buy',
    ],
  },
  ...RECIPES_OFFLINE_PHRASES,
  { tool: 'save_recipe', examples: [SAVE_RECIPE_EXAMPLE] },
];

export interface Intent {
  /** the tool to call */
  name: string;
  args: JsonObject;
}

interface Rule {
  tool: string;
  match(text: string): JsonObject | undefined;
}

const PREFIX = String.raw`(?:the\s+)?(?:customer\s+|user\s+)?(?:with\s+(?:the\s+)?(?:email|phone|username)\s+)?`;

// Order matters: "cancel order 1" is not a status question, "orders for" is not "order".
const RULES: readonly Rule[] = [
  // First: a recipe's text may say anything ("order", "list my recipes"), and all of it is the recipe.
  { tool: 'save_recipe', match: matchSaveRecipe },
  // The beer finder's phrasings come first: "find breweries in ..." is not a customer lookup.
  { tool: 'recommend_breweries', match: (text) => (/\brecommend\b[^.?!]*\bbrewer(?:y|ies)\b|\bbrewery\s+recommendations?\b/i.test(text) ? {} : undefined) },
  { tool: 'get_website_summary_tool', match: matchSummary },
  { tool: 'search_breweries_tool', match: matchBrewerySearch },
  ...RECIPES_RULES,
  { tool: 'update_user_contact', match: matchContactUpdate },
  { tool: 'cancel_order', match: capture(/\bcancel(?:\s+(?:the\s+)?order)?\s+#?(\d+)\b/i, 'order_id') },
  { tool: 'get_customer_orders', match: capture(/\borders\s+(?:for|of)\s+(?:the\s+)?(?:customer\s+|user\s+)?#?(\d+)\b/i, 'customer_id') },
  { tool: 'get_order_by_id', match: capture(/\border\s+(?:#|number\s+|no\.?\s*|id\s+)?(\d+)\b/i, 'order_id') },
  { tool: 'get_user', match: lookup(new RegExp(String.raw`\bget\s+user\s+${PREFIX}(\S+)`, 'i')) },
  {
    tool: 'get_user_info',
    match: lookup(
      new RegExp(String.raw`\b(?:look\s*up|find|who\s+is|everything\s+about|search\s+for)\s+${PREFIX}(\S+)`, 'i'),
    ),
  },
  // The beer agent: the profile is always the conversation's client's, so no id is needed; analytical
  // questions go to the tool as they were typed (the offline SQL generation reads them, src/model/offline-beer.ts).
  { tool: 'get_client_profile_tool', match: (text) => (/\b(?:my\s+(?:client\s+)?profile|who\s+am\s+i)\b/i.test(text) ? {} : undefined) },
  { tool: 'run_analytical_query_tool', match: question(/\bhow\s+(?:many|much)\b.+\b(?:did|have)\s+(?:i|we)\s+(?:buy|bought|purchased?|order(?:ed)?)\b/i) },
  { tool: 'run_analytical_query_tool', match: question(/\b(?:my|our)\s+top\s+(?:breweries|beers)\b/i) },
  { tool: 'run_analytical_query_tool', match: question(/\b(?:best[-\s]selling|most\s+(?:sold|popular))\s+beer\b/i) },
  { tool: 'run_analytical_query_tool', match: question(/\bwhat\s+(?:did|does|has)\s+(?:client\s+)?CLT-[A-Z0-9]+\s+(?:buy|bought|purchase)/i) },
];

function question(pattern: RegExp): (text: string) => JsonObject | undefined {
  return (text) => (pattern.test(text) ? { question: text.trim() } : undefined);
}

/**
 * The call the text asks for. The first phrasing that matches decides: when its tool is not offered there is
 * no call, rather than a lesser match ("cancel order 1" must not turn into a status lookup).
 */
export function matchIntent(text: string, tools: ReadonlySet<string>): Intent | undefined {
  for (const rule of RULES) {
    const args = rule.match(text);
    if (args) return tools.has(rule.tool) ? { name: rule.tool, args } : undefined;
  }
  return undefined;
}

function matchSummary(text: string): JsonObject | undefined {
  const found = /\bsummary\s+(?:of|for)\s+(.+?)\s+(\S+)\s*$/i.exec(text.trim());
  return found ? { brewery_name: clean(found[1]!), url: clean(found[2]!) } : undefined;
}

function matchBrewerySearch(text: string): JsonObject | undefined {
  const found = /\bfind\s+(?:(\w+)\s+)?breweries\s+in\s+([^,]+?)(?:,\s*([a-z][a-z .]*?))?\s*[.!?]?$/i.exec(text.trim());
  if (!found) return undefined;
  const [, type, place, state] = found;
  // "in Oregon" alone is a state; "in Bend, OR" a city and its state
  return {
    ...(state ? { city: place!.trim(), state: state.trim() } : stateName(place!) ? { state: place!.trim() } : { city: place!.trim() }),
    ...(type && !/^(?:new|some|the|all)$/i.test(type) ? { brewery_type: type.toLowerCase() } : {}),
  };
}

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

const FILLERS = new Set(['number', 'no', 'no.', 'to', 'of', 'for', 'customer', 'user', 'the', 'is', 'as', 'new', 'id', 'address', '=', ':']);

function matchContactUpdate(text: string): JsonObject | undefined {
  if (!/\b(?:update|change|set|edit)\b/i.test(text)) return undefined;
  const userId = /\b(\d{7})\b/.exec(text)?.[1];
  if (!userId) return undefined;
  const tokens = text.split(/\s+/).map(clean).filter(Boolean);
  const email = tokens.find((token) => token.includes('@')) ?? valueAfter(tokens, 'email', userId);
  const phone =
    valueAfter(tokens, 'phone', userId) ??
    tokens.find((token) => token !== userId && keyOf(token) === 'phone' && !token.includes('@'));
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
