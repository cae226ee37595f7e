// Hard-avoid families: an avoided item and its obvious derivatives (a PatchSet may add
// neither). A user's avoid that is not a family here still matches itself as a word.
import { mentionsTerm } from './words.ts';

export const HARD_AVOID_FAMILIES: Record<string, readonly string[]> = {
  peanut: ['peanut', 'peanuts', 'peanut butter', 'peanut oil', 'groundnut', 'groundnut oil', 'satay', 'arachis oil'],
  dairy: [
    'milk',
    'butter',
    'cream',
    'cheese',
    'yogurt',
    'yoghurt',
    'ghee',
    'whey',
    'casein',
    'buttermilk',
    'crème fraîche',
    'creme fraiche',
    'sour cream',
    'parmesan',
    'mozzarella',
    'cheddar',
    'ricotta',
    'mascarpone',
    'feta',
    'custard',
    'ice cream',
    'kefir',
    'paneer',
    'quark',
  ],
  gluten: [
    'gluten',
    'wheat',
    'flour',
    'bread',
    'breadcrumbs',
    'pasta',
    'spaghetti',
    'noodles',
    'barley',
    'rye',
    'couscous',
    'seitan',
    'bulgur',
    'semolina',
  ],
  egg: ['egg', 'eggs', 'egg yolk', 'egg white', 'mayonnaise', 'mayo', 'meringue', 'aioli'],
  shellfish: [
    'shellfish',
    'shrimp',
    'prawn',
    'prawns',
    'crab',
    'lobster',
    'crayfish',
    'langoustine',
    'scallop',
    'mussel',
    'clam',
    'oyster',
  ],
  fish: ['fish', 'salmon', 'tuna', 'cod', 'anchovy', 'anchovies', 'sardine', 'mackerel', 'fish sauce', 'worcestershire sauce'],
  'tree nut': [
    'almond',
    'almonds',
    'walnut',
    'walnuts',
    'cashew',
    'cashews',
    'pecan',
    'pistachio',
    'hazelnut',
    'macadamia',
    'pine nut',
    'pine nuts',
    'praline',
    'marzipan',
    'nutella',
  ],
  soy: ['soy', 'soya', 'soy sauce', 'tofu', 'tempeh', 'edamame', 'miso', 'tamari'],
  sesame: ['sesame', 'sesame oil', 'tahini', 'sesame seeds'],
  pork: ['pork', 'bacon', 'ham', 'pancetta', 'prosciutto', 'lard', 'chorizo', 'salami', 'guanciale', 'sausage'],
  alcohol: ['alcohol', 'wine', 'beer', 'rum', 'vodka', 'brandy', 'whisky', 'whiskey', 'gin', 'sherry', 'sake', 'mirin'],
  meat: ['meat', 'beef', 'pork', 'chicken', 'lamb', 'bacon', 'ham', 'veal', 'turkey', 'duck', 'mince', 'sausage', 'stock cube'],
};

/** Common names for a family, so "nuts", "milk products" or "eggs" find theirs. */
const ALIASES: Record<string, string> = {
  peanuts: 'peanut',
  nuts: 'tree nut',
  'tree nuts': 'tree nut',
  milk: 'dairy',
  lactose: 'dairy',
  eggs: 'egg',
  wheat: 'gluten',
  seafood: 'shellfish',
  soya: 'soy',
  vegetarian: 'meat',
};

// Phrases that hold a family's word without being that thing: plant milks and nut butters are not dairy,
// an eggplant is no egg, and "dairy-free" anything is free of it.
const NOT_THE_THING: Record<string, readonly RegExp[]> = {
  dairy: [
    /\b(?:coconut|almond|oat|soy|soya|rice|cashew|hemp|plant|vegan)[ -](?:milk|cream|butter|cheese|yogurt|yoghurt)\b/giu,
    /\b(?:peanut|nut|almond|cashew|cocoa|shea|apple|seed)[ -]butter\b/giu,
    /\bbutter(?:nut)?[ -](?:squash|beans?)\b/giu,
    /\bcream of tartar\b/giu,
  ],
  egg: [/\beggplants?\b/giu],
};
const FREE_OF = /\b[\p{L}]+[ -]free(?:\s+[\p{L}]+)?/giu;

/** Every term a hard avoid stands for: its family (peanut → peanut butter, peanut oil, …), or itself. */
export function avoidTerms(avoid: string): readonly string[] {
  const key = avoid.trim().toLowerCase();
  const family = HARD_AVOID_FAMILIES[ALIASES[key] ?? key];
  return family ? [...new Set([key, ...family])] : [key];
}

function withoutExceptions(text: string, avoid: string): string {
  const key = avoid.trim().toLowerCase();
  const patterns = NOT_THE_THING[ALIASES[key] ?? key] ?? [];
  return patterns.reduce((rest, pattern) => rest.replace(pattern, ' '), text.replace(FREE_OF, ' '));
}

/** The terms of `avoid` that `text` names (after taking out "coconut milk", "dairy-free" and the like). */
export function avoidHits(text: string, avoid: string): string[] {
  const cleaned = withoutExceptions(text, avoid);
  return avoidTerms(avoid).filter((term) => mentionsTerm(cleaned, term));
}

/**
 * The hard avoids that `after` brings in: named there and not already in `before` (an update that keeps
 * the recipe's own butter introduces nothing; one that adds peanut oil does).
 */
export function introducedAvoids(after: string, before: string, hardAvoids: readonly string[]): { avoid: string; terms: string[] }[] {
  const found: { avoid: string; terms: string[] }[] = [];
  for (const avoid of hardAvoids) {
    const already = new Set(avoidHits(before, avoid));
    const terms = avoidHits(after, avoid).filter((term) => !already.has(term));
    if (terms.length) found.push({ avoid, terms });
  }
  return found;
}
