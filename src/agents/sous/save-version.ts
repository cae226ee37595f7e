// A changed recipe saved to My recipes as a new recipe beside the one the cook started from: the original
// stays as it was, so an edit in the kitchen never costs a recipe. Saved recipes are the recipes agent's:
// sous reads and saves them through what that agent exports (src/agents/recipes/public.ts), as the user.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { asUser } from '../../db/pool.ts';
import { type SavedIngredient, type SavedRecipeFields, findSavedRecipe, saveRecipeAs } from '../recipes/public.ts';
import type { Recipe } from './schemas.ts';
import { UNITS } from './words.ts';

export type { SavedIngredient } from '../recipes/public.ts';

/** What the saved copy takes from the recipe it was cooked from; a recipe typed in (or the demo) has none. */
export interface Origin {
  name: string;
  recipe_type: string;
  ingredients: Partial<SavedIngredient>[];
  prep_time: number | null;
  cook_time: number | null;
  source_references: unknown[];
  tags: unknown[];
}

export type SavedCopy = SavedRecipeFields & { servings: number };

const SUFFIX = ' (changed)';
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** "<title> (changed)", once: cooking a saved copy again does not stack the suffix. */
export function changedName(title: string): string {
  const base = title.endsWith(SUFFIX) ? title.slice(0, -SUFFIX.length) : title;
  return `${clip(base, 200 - SUFFIX.length)}${SUFFIX}`;
}

/** How sousInit wrote a saved ingredient as a line; the same words map a line back to its fields. */
export function ingredientLine(i: Partial<SavedIngredient>): string {
  return [[i.quantity, i.unit, i.name].filter((part) => part && String(part).trim()).join(' '), i.notes].filter(Boolean).join(', ');
}

const QUANTITY = /^(\d+\s+\d+\/\d+|\d+\/\d+|\d+(?:[.,]\d+)?(?:-\d+(?:[.,]\d+)?)?|[½⅓⅔¼¾⅛])\s+(.+)$/;

/**
 * A line the cook's changes wrote ("3 tbsp olive oil", "1 handful parsley, chopped") as saved fields. A line
 * the original had keeps the original's fields exactly; a new one is read plainly (a leading quantity, a
 * known unit, notes after the first comma), and a line that does not read so is all name.
 */
export function savedIngredient(line: string, original: ReadonlyMap<string, Partial<SavedIngredient>>): SavedIngredient {
  const known = original.get(line);
  if (known?.name?.trim()) {
    return { name: clip(known.name, 200), quantity: known.quantity ?? null, unit: known.unit ?? null, notes: known.notes ?? null };
  }
  const comma = line.indexOf(', ');
  const head = comma > 0 ? line.slice(0, comma) : line;
  const notes = comma > 0 ? clip(line.slice(comma + 2).trim(), 500) || null : null;
  const match = QUANTITY.exec(head.trim());
  let quantity: string | null = null;
  let unit: string | null = null;
  let name = head.trim();
  if (match) {
    quantity = match[1]!;
    const [first = '', ...rest] = match[2]!.split(/\s+/);
    if (UNITS.has(first.toLowerCase()) && rest.length) {
      unit = first;
      name = rest.join(' ');
    } else name = match[2]!;
  }
  return { name: clip(name || line, 200), quantity, unit, notes };
}

/** The row to save: the conversation's recipe as it is now, typed and timed like the one it came from. */
export function savedCopy(recipe: Recipe, origin: Origin | undefined, name?: string): SavedCopy {
  const lines = new Map((origin?.ingredients ?? []).map((i) => [ingredientLine(i), i] as const));
  const notes = recipe.notes.join('\n\n').trim();
  return {
    name: name ?? changedName(recipe.title),
    recipe_type: origin?.recipe_type ?? 'food',
    ingredients: recipe.ingredients.map((i) => savedIngredient(i.text, lines)),
    instructions: recipe.steps.map((s) => s.text),
    prep_time: origin?.prep_time ?? null,
    cook_time: origin?.cook_time ?? null,
    servings: recipe.servings,
    source_references: origin?.source_references ?? [],
    notes: notes ? clip(notes, 10_000) : null,
    tags: origin?.tags ?? [],
  };
}

/**
 * The id of a saved copy: the conversation and the content, hashed (a UUID of version 8, RFC 9562). The same
 * content saved twice is one recipe, so a double click or a retried request makes no second copy; `attempt`
 * moves on past a copy the user has deleted since.
 */
export function copyId(conversationId: string, copy: SavedCopy, attempt: number): string {
  const hex = createHash('sha256')
    .update(`sous-saved-copy|${conversationId}|${attempt}|${JSON.stringify(copy)}`)
    .digest('hex')
    .slice(0, 32)
    .split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The caller's own saved recipe (deleted or not: a copy keeps its type even if the original is gone). */
export async function readOrigin(pool: pg.Pool, userId: string, id: string): Promise<Origin | undefined> {
  const saved = await asUser(pool, userId, (db) => findSavedRecipe(db, id));
  if (!saved) return undefined;
  const { name, recipe_type, ingredients, prep_time, cook_time, source_references, tags } = saved;
  return { name, recipe_type, ingredients, prep_time, cook_time, source_references, tags };
}

// A copy deleted since, and then the next: a handful of tries is plenty; beyond, the content saves again anyway.
const ATTEMPTS = 20;

/** Inserts the copy, or finds the live one saved earlier with this content. */
export async function saveCopy(
  pool: pg.Pool,
  userId: string,
  conversationId: string,
  copy: SavedCopy,
): Promise<{ recipeId: string; created: boolean }> {
  return asUser(pool, userId, async (db) => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const id = copyId(conversationId, copy, attempt);
      const saved = await saveRecipeAs(db, { id, userId, conversationId, recipe: copy });
      if (saved !== 'deleted') return { recipeId: id, created: saved === 'created' };
    }
    throw new Error(`No free id for a saved copy of conversation ${conversationId} after ${ATTEMPTS} attempts`);
  });
}
