// Reading ingredient and step text: what an ingredient is called once its quantity is stripped, and whether
// a step mentions it. Heuristics on purpose: a false "mentions" only asks for a step update or a note.
import { regExpLiteral } from '../../shared/regexp-literal.ts';

/** Units of measure as ingredient lines write them: split off as a saved ingredient's unit. */
export const UNITS: ReadonlySet<string> = new Set([
  'g',
  'gram',
  'grams',
  'kg',
  'mg',
  'ml',
  'l',
  'litre',
  'litres',
  'liter',
  'liters',
  'dl',
  'cl',
  'cup',
  'cups',
  'tbsp',
  'tablespoon',
  'tablespoons',
  'tsp',
  'teaspoon',
  'teaspoons',
  'oz',
  'ounce',
  'ounces',
  'lb',
  'lbs',
  'pound',
  'pounds',
  'pinch',
  'pinches',
  'dash',
  'dashes',
  'clove',
  'cloves',
  'can',
  'cans',
  'tin',
  'tins',
  'slice',
  'slices',
  'handful',
  'handfuls',
  'bunch',
  'bunches',
  'sprig',
  'sprigs',
  'stick',
  'sticks',
  'knob',
  'splash',
  'tbsps',
  'tsps',
  'piece',
  'pieces',
]);

/** What may stand before an ingredient's name besides a quantity: a unit, an article, a size. */
const LEADING_WORDS = new Set([...UNITS, 'a', 'an', 'some', 'few', 'small', 'medium', 'large', 'x', 'of']);

const QUANTITY = /^(?:\d+(?:[.,]\d+)?(?:\/\d+)?|[½⅓⅔¼¾⅛]|\d+[½⅓⅔¼¾⅛]|\d+-\d+)$/;

export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}½⅓⅔¼¾⅛/.,-]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** "200 g unsalted butter, softened (room temperature)" → "unsalted butter" */
export function ingredientName(text: string): string {
  const head = text.replace(/\([^)]*\)/g, ' ').split(/[,;]/)[0] ?? text;
  const words = normalise(head).split(' ').filter(Boolean);
  while (words.length > 1 && (QUANTITY.test(words[0]!) || LEADING_WORDS.has(words[0]!))) words.shift();
  return words.join(' ').replace(/[.,]+$/, '');
}

/** Whether `text` names `term` as a word (plural allowed): "butter" is in "the butter", not in "butternut". */
export function mentionsTerm(text: string, term: string): boolean {
  const t = term.trim().toLowerCase();
  if (!t) return false;
  return new RegExp(`(?<![\\p{L}\\p{N}])${regExpLiteral(t)}(?:s|es)?(?![\\p{L}\\p{N}])`, 'iu').test(text);
}

/** Whether a step's text uses an ingredient: its whole name, or its last word (the noun) when long enough. */
export function mentionsIngredient(text: string, ingredientText: string): boolean {
  const name = ingredientName(ingredientText);
  if (!name) return false;
  if (mentionsTerm(text, name)) return true;
  const noun = name.split(' ').at(-1) ?? '';
  return noun.length >= 3 && mentionsTerm(text, noun);
}

/** The text with its numbers taken out: a scaling patch may change numbers and nothing else. */
export function withoutQuantities(text: string): string {
  return normalise(text)
    .replace(/\d+(?:[.,]\d+)?(?:\/\d+)?|[½⅓⅔¼¾⅛]/g, '#')
    .replace(/#(?:\s*-\s*#)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
}
