// The offline model's part of save_recipe (the SQL tool's phrasings are in offline-chat.ts): the phrasing
// that asks for a save, a deterministic parser for recipes written the way the example of docs/agents/recipes.md is ("Old
// Fashioned cocktail. Ingredients: 2 oz bourbon, ... Instructions: 1) ..., 2) ... Prep time: 5 minutes.
// Serves: 1. Type: cocktail."), an image prompt made from the structured recipe, and a small generated PNG
// (node:zlib, no image library), so a save works end to end without GEMINI_API_KEY.
import { crc32, deflateSync } from 'node:zlib';
import type { JsonObject } from '../../shared/messages.ts';
import type { RecipeContent, RecipeType } from './recipe.ts';
import type { OfflineImage, OfflineTask } from '../../model/offline-types.ts';

/** The phrasing the offline model turns into save_recipe (docs/agents/recipes.md, help text). */
export const SAVE_RECIPE_EXAMPLE =
  'save this recipe: Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. Prep time: 5 minutes. Serves: 1. Type: cocktail.';

/** "save this recipe: <text>" (or "keep the recipe - <text>"): everything after the colon is the recipe. */
export function matchSaveRecipe(text: string): JsonObject | undefined {
  const raw = /^\s*(?:please\s+)?(?:save|keep)\s+(?:this|the|my|a)?\s*recipe\s*[:\-–]\s*([\s\S]+)$/i.exec(text)?.[1]?.trim();
  return raw ? { raw_recipe_data: raw } : undefined;
}

/** The markers on lines of their own (the prompt's prose may name them); greedy, so the recipe may contain anything. */
const RAW = /^<recipe>\n([\s\S]*)\n<\/recipe>$/m;

/** The text between the prompt's <recipe> marker lines (the whole prompt when they are missing). */
function between(prompt: string): string {
  return RAW.exec(prompt)?.[1] ?? prompt;
}

const LABELS: Record<string, string> = {
  ingredients: 'ingredients',
  instructions: 'instructions',
  steps: 'instructions',
  method: 'instructions',
  directions: 'instructions',
  'prep time': 'prep',
  'preparation time': 'prep',
  'cook time': 'cook',
  'cooking time': 'cook',
  serves: 'servings',
  servings: 'servings',
  yield: 'servings',
  type: 'type',
  notes: 'notes',
  tips: 'notes',
  source: 'sources',
  sources: 'sources',
  tags: 'tags',
};
const LABEL = new RegExp(
  `\\b(${Object.keys(LABELS)
    .sort((a, b) => b.length - a.length)
    .join('|')
    .replace(/ /g, '\\s+')})\\s*:`,
  'gi',
);

const UNITS = new Set(
  (
    'oz ounce ounces ml cl dl l liter liters litre litres g gram grams kg lb lbs pound pounds cup cups tbsp tablespoon tablespoons ' +
    'tsp teaspoon teaspoons dash dashes drop drops pinch pinches clove cloves slice slices sprig sprigs can cans piece pieces ' +
    'splash splashes barspoon barspoons part parts handful handfuls stick sticks bunch bunches'
  ).split(' '),
);
const NUMBER_WORDS: Record<string, string> = { a: '1', an: '1', one: '1', two: '2', three: '3', four: '4', five: '5', six: '6' };

/** Seed-style text to a recipe. Never fails: a text without labels becomes a recipe named by its first sentence. */
export function parseRecipeText(raw: string): RecipeContent {
  const text = raw.replace(/^\s*(?:please\s+)?save\s+(?:this|the|my)?\s*recipe\s*[:-]\s*/i, '').trim();
  const sections: Record<string, string> = {};
  const marks = [...text.matchAll(LABEL)];
  const head = (marks[0]?.index !== undefined ? text.slice(0, marks[0].index) : text).trim();
  marks.forEach((mark, index) => {
    const key = LABELS[mark[1]!.toLowerCase().replace(/\s+/g, ' ')]!;
    const end = marks[index + 1]?.index ?? text.length;
    sections[key] ??= trimEnd(text.slice(mark.index! + mark[0].length, end));
  });

  const firstSentence = trimEnd(head.split(/(?<=[.!?])\s+/)[0] ?? head) || 'Untitled recipe';
  const recipeType = typeOf(sections.type, `${firstSentence} ${text}`);
  const name = cleanName(firstSentence, recipeType);
  return {
    name: name.slice(0, 200),
    recipe_type: recipeType,
    ingredients: splitList(sections.ingredients).map(parseIngredient),
    instructions: splitSteps(sections.instructions),
    prep_time: minutesOf(sections.prep),
    cook_time: minutesOf(sections.cook),
    servings: firstInteger(sections.servings),
    source_references: splitList(sections.sources).filter((item) => /^https?:\/\//i.test(item)),
    notes: sections.notes || null,
    tags: splitList(sections.tags)
      .map((tag) => tag.toLowerCase())
      .slice(0, 50),
  };
}

function trimEnd(value: string): string {
  return value
    .trim()
    .replace(/[\s.;,]+$/, '')
    .trim();
}

function typeOf(declared: string | undefined, context: string): RecipeType {
  const named = declared?.toLowerCase().match(/cocktail|food|dessert/)?.[0];
  if (named) return named as RecipeType;
  if (/\b(cocktail|drink|martini|spritz|sour|negroni|mojito)\b/i.test(context)) return 'cocktail';
  if (/\b(dessert|cake|cookies?|pie|tart|ice cream|pudding|brownies?|mousse)\b/i.test(context)) return 'dessert';
  return 'food';
}

/** "Old Fashioned cocktail" is the cocktail "Old Fashioned". */
function cleanName(sentence: string, type: RecipeType): string {
  const stripped = sentence.replace(new RegExp(`\\s+(?:${type}|recipe)$`, 'i'), '').trim();
  return stripped || sentence;
}

/** Commas, semicolons and new lines separate items; commas inside parentheses do not. */
function splitList(value: string | undefined): string[] {
  if (!value) return [];
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of value) {
    if (character === '(') depth += 1;
    if (character === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (character === ',' || character === ';' || character === '\n')) {
      items.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  items.push(current);
  return items.map((item) => trimEnd(item.replace(/^\s*(?:[-*•]|and\s)\s*/i, ''))).filter(Boolean);
}

function parseIngredient(item: string): RecipeContent['ingredients'][number] {
  const notes = /\(([^)]*)\)/.exec(item)?.[1]?.trim();
  const words = item
    .replace(/\([^)]*\)/g, ' ')
    .trim()
    .split(/\s+/);
  let quantity: string | null = null;
  let unit: string | null = null;
  const first = words[0]?.toLowerCase() ?? '';
  if (/^\d+(?:[.,/]\d+)?$|^\d*[½¼¾⅓⅔]$/.test(first) || NUMBER_WORDS[first]) {
    quantity = NUMBER_WORDS[first] ?? words[0]!;
    words.shift();
    // "1 1/2 oz"
    if (words[0] && /^\d+\/\d+$/.test(words[0])) quantity = `${quantity} ${words.shift()}`;
  }
  if (quantity && words.length > 1 && UNITS.has(words[0]!.toLowerCase().replace(/\.$/, ''))) {
    unit = words.shift()!.replace(/\.$/, '');
    if (words[0]?.toLowerCase() === 'of') words.shift();
  }
  const name = words.join(' ').trim() || item.trim();
  return { name: name.slice(0, 200), quantity, unit, notes: notes || null };
}

function splitSteps(value: string | undefined): string[] {
  if (!value) return [];
  const numbered = value
    .split(/(?:^|[\s,;.]+)(?:step\s+)?\d+\s*[).:]\s+/i)
    .map(trimEnd)
    .filter(Boolean);
  const steps =
    numbered.length > 1 || /^\s*(?:step\s+)?1\s*[).:]/i.test(value)
      ? numbered
      : value
          .split(/(?<=[.!?])\s+|\n+/)
          .map(trimEnd)
          .filter(Boolean);
  return steps.map((step) => step.charAt(0).toUpperCase() + step.slice(1)).map((step) => step.slice(0, 2000));
}

function minutesOf(value: string | undefined): number | null {
  if (!value) return null;
  const hours = /(\d+(?:\.\d+)?)\s*(?:h|hr|hrs|hours?)\b/i.exec(value);
  const minutes = /(\d+)\s*(?:m|min|mins|minutes?)\b/i.exec(value);
  if (hours || minutes) return Math.round(Number(hours?.[1] ?? 0) * 60 + Number(minutes?.[1] ?? 0));
  return firstInteger(value, 0);
}

function firstInteger(value: string | undefined, min = 1): number | null {
  const match = value ? /\d+/.exec(value) : null;
  const number = match ? Number(match[0]) : NaN;
  return Number.isFinite(number) && number >= min && number <= 10_000 ? number : null;
}

// ---- the tasks ----------------------------------------------------------------------------------

export const recipeStructuring: OfflineTask = (request) => JSON.stringify(parseRecipeText(between(request.prompt)));

export const recipeImagePrompt: OfflineTask = (request) => {
  let recipe: Partial<RecipeContent> = {};
  try {
    recipe = JSON.parse(between(request.prompt)) as Partial<RecipeContent>;
  } catch {
    // a prompt without the recipe's JSON still gets a prompt
  }
  const name = recipe.name ?? 'a home-made dish';
  const ingredients = (recipe.ingredients ?? [])
    .slice(0, 4)
    .map((item) => item.name)
    .join(', ');
  const setting =
    recipe.recipe_type === 'cocktail'
      ? 'in a fitting glass on a dark wooden bar, soft side light, shallow depth of field'
      : recipe.recipe_type === 'dessert'
        ? 'on a white ceramic plate on a marble table, bright natural light'
        : 'on a rustic plate on a linen tablecloth, warm natural light';
  return `Professional food photograph of ${name}${ingredients ? ` (${ingredients})` : ''}, ${setting}, appetising, photorealistic, no text.`;
};

/** A 64×64 PNG: a plate (a disc) on a background whose colours come from the prompt, so each recipe differs. */
export const recipeImage: OfflineImage = (request) => ({ mimeType: 'image/png', data: placeholderPng(request.prompt) });

export function placeholderPng(seed: string, size = 64): Uint8Array {
  const hash = crc32(seed);
  const background = [hash & 0xff, (hash >>> 8) & 0xff, (hash >>> 16) & 0xff].map((value) => 64 + (value % 128));
  const plate = [240, 236, 228];
  const food = [(hash >>> 24) & 0xff, 120, 60].map((value) => 80 + (value % 150));
  const rows: Buffer[] = [];
  const center = (size - 1) / 2;
  for (let y = 0; y < size; y += 1) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x += 1) {
      const distance = Math.hypot(x - center, y - center) / (size / 2);
      const color = distance < 0.45 ? food : distance < 0.8 ? plate : background.map((value) => Math.max(0, value - Math.round(y / 2)));
      row.set(color, 1 + x * 3);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}
