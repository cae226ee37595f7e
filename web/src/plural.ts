// Counted nouns in a person's words: "1 search", "3 breweries", "no orders". One place, so a field's name
// ("searches") never comes out as "1 searche".

export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : many}`;
}

/** "breweries" → "brewery", "searches" → "search", "boxes" → "box", "orders" → "order", "status" as it is. */
export function singular(noun: string): string {
  if (/ies$/.test(noun)) return `${noun.slice(0, -3)}y`;
  if (/(s|x|z|ch|sh)es$/.test(noun)) return noun.slice(0, -2);
  if (/(ss|us|is)$/.test(noun)) return noun;
  return noun.replace(/s$/, '');
}

/** A list's count named by its field: "1 search", "3 searches", "No searches"; rows and items are "results". */
export function listCount(count: number, field: string): string {
  const name = field.toLowerCase().trim();
  const many = /s$/.test(name) && !/^(rows?|results?|items?|data)$/.test(name) ? name : 'results';
  return count === 0 ? `No ${many}` : plural(count, singular(many), many);
}
