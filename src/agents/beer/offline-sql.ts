// The offline model's SQL for the beer agent's documented questions (task `sql_generation`): the same
// prompt Gemini gets, read for its question, answered with fixed SQL. What it writes goes through the
// same guard and database as a real model's SQL, including the one phrasing that tries another client.
//   "how many <beer> did I buy"          -> own purchases of that beer
//   "my top breweries" / "my top beers"  -> own purchases grouped
//   "best-selling beer in <state|region>" and "best-selling beer" -> the aggregate views
//   "what did <CLT-…> buy"               -> SQL naming that client (refused, or confined to nothing)
import type { OfflineTask } from '../../model/offline-types.ts';

const REGIONS = new Set(['northeast', 'midwest', 'south', 'west']);

const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The question at the end of the SQL generation prompt (prompts/beer/sql_generation.txt). */
export function questionOf(prompt: string): string {
  const match = /(?:^|\n)Question:\s*(.*)\s*$/.exec(prompt);
  return (match?.[1] ?? prompt).trim();
}

export function offlineSql(question: string): string {
  const q = question.trim().replace(/[?.!]+$/, '');
  let match = /\bwhat\s+(?:did|does|has)\s+(?:client\s+)?(CLT-[A-Z0-9]+)\s+(?:buy|bought|purchase)/i.exec(q);
  if (match) {
    return `SELECT purchased_on, beer, brewery, quantity FROM purchases WHERE client_id = ${quote(match[1]!.toUpperCase())} ORDER BY purchased_on DESC LIMIT 50`;
  }
  match = /\bhow\s+(?:many|much)\s+(.+?)\s+(?:did|have)\s+(?:I|we)\s+(?:buy|bought|purchase|purchased|order|ordered)\b/i.exec(q);
  if (match) {
    const beer = match[1]!.replace(/^(?:cases\s+of\s+|of\s+)/i, '').trim();
    return `SELECT ${quote(beer)} AS beer, coalesce(sum(quantity), 0) AS cases, count(*) AS purchases FROM purchases WHERE lower(beer) = lower(${quote(beer)}) LIMIT 1`;
  }
  if (/\b(?:my|our)\s+top\s+breweries\b/i.test(q)) {
    return 'SELECT brewery, sum(quantity) AS cases, count(*) AS purchases FROM purchases GROUP BY brewery ORDER BY cases DESC, brewery LIMIT 5';
  }
  if (/\b(?:my|our)\s+top\s+beers\b/i.test(q)) {
    return 'SELECT beer, sum(quantity) AS cases, count(*) AS purchases FROM purchases GROUP BY beer ORDER BY cases DESC, beer LIMIT 5';
  }
  match = /\b(?:best[-\s]selling|most\s+(?:sold|popular))\s+beer(?:\s+in\s+(?:the\s+)?(.+))?$/i.exec(q);
  if (match) {
    const place = match[1]?.trim();
    if (!place || /^(?:the\s+)?(?:country|us|usa|united states)$/i.test(place)) {
      return 'SELECT beer, total_quantity, clients FROM sales_by_beer ORDER BY total_quantity DESC, beer LIMIT 1';
    }
    if (REGIONS.has(place.toLowerCase())) {
      return `SELECT region, beer, total_quantity, clients FROM sales_by_region_beer WHERE lower(region) = lower(${quote(place)}) ORDER BY total_quantity DESC, beer LIMIT 1`;
    }
    return `SELECT state, beer, total_quantity, clients FROM sales_by_state_beer WHERE lower(state) = lower(${quote(place)}) ORDER BY total_quantity DESC, beer LIMIT 1`;
  }
  return (
    "SELECT 'The offline model has no SQL for this question. It knows: how many <beer> did I buy; my top breweries; " +
    "my top beers; best-selling beer in <state or region>.' AS message"
  );
}

export const offlineSqlGeneration: OfflineTask = (request) => offlineSql(questionOf(request.prompt));
