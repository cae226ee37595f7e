// The offline model's phrasings for the recipes agent's SQL tool, and how it reads the tool's results.
// Every phrasing becomes one execute_recipe_sql query; the guard checks it like any model's SQL.
import type { AgentOffline, OfflinePhrase } from '../../model/offline-types.ts';
import type { JsonObject } from '../../shared/messages.ts';
import { SAVE_RECIPE_EXAMPLE, matchSaveRecipe, recipeImage, recipeImagePrompt, recipeStructuring } from './offline-save.ts';

const TOOL = 'execute_recipe_sql';
const UUID = String.raw`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`;

const EXAMPLE_ID = '3f2b8c1e-5a7d-4e2f-9b1c-2d4e6f8a0b1c';

export const RECIPES_OFFLINE_PHRASES: readonly OfflinePhrase[] = [
  {
    tool: TOOL,
    examples: [
      'run sql: SELECT name FROM saved_recipes',
      'list my recipes',
      'list my cocktails',
      'find recipes with bourbon',
      `show recipe ${EXAMPLE_ID}`,
      `delete recipe ${EXAMPLE_ID}`,
      `restore recipe ${EXAMPLE_ID}`,
      `set servings of ${EXAMPLE_ID} to 4`,
      // what a recipe card's Delete and Modify write into the message box (web/src/agents/recipes/RecipeCard.tsx)
      `Delete my recipe "Old Fashioned" (id ${EXAMPLE_ID})`,
      `Modify my recipe "Old Fashioned" (id ${EXAMPLE_ID}): set servings to 2`,
    ],
  },
];

/** A SQL string literal: quotes doubled (standard_conforming_strings is on, so backslashes are plain). */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const likeLiteral = (text: string) => literal(`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);

const LIST_COLUMNS = 'id, name, recipe_type, prep_time, cook_time, servings, tags';
const TYPES: Record<string, string> = {
  cocktail: 'cocktail',
  cocktails: 'cocktail',
  drink: 'cocktail',
  drinks: 'cocktail',
  dessert: 'dessert',
  desserts: 'dessert',
  food: 'food',
  dish: 'food',
  dishes: 'food',
  meal: 'food',
  meals: 'food',
};
const COLUMNS: Record<string, string> = {
  servings: 'servings',
  'prep time': 'prep_time',
  'cook time': 'cook_time',
  prep_time: 'prep_time',
  cook_time: 'cook_time',
};

const query = (sql: string): JsonObject => ({ query: sql });

/** The arguments of an execute_recipe_sql call, when the text is one of the phrasings. */
export function matchRecipesSql(text: string): JsonObject | undefined {
  const sql = /^\s*(?:run\s+)?sql\s*:\s*([\s\S]+?)\s*$/i.exec(text)?.[1];
  if (sql) return query(sql);

  const id = new RegExp(UUID, 'i').exec(text)?.[1]?.toLowerCase();
  if (id) {
    // A recipe's quoted name is the user's words ("Delete me later" cake): only the text around it says what to do.
    const said = text.replace(/"[^"]*"|“[^”]*”/g, '""');
    if (/\b(?:delete|remove)\s+(?:the\s+|my\s+)?recipe\b/i.test(said))
      return query(`UPDATE saved_recipes SET is_deleted = true WHERE id = '${id}'`);
    if (/\b(?:restore|undelete|recover)\s+(?:the\s+|my\s+)?recipe\b/i.test(said))
      return query(`UPDATE saved_recipes SET is_deleted = false WHERE id = '${id}'`);
    // "set servings of <id> to 4", or after a card's "Modify my recipe "…" (id <id>):" just "set servings to 4"
    const set = /\bset\s+(servings|prep[ _]time|cook[ _]time)\s+(?:(?:of|for)\s+(?:recipe\s+)?\S+\s+)?to\s+(\d{1,5})\b/i.exec(said);
    if (set)
      return query(
        `UPDATE saved_recipes SET ${COLUMNS[set[1]!.toLowerCase().replace('_', ' ')] ?? 'servings'} = ${Number(set[2])} WHERE id = '${id}'`,
      );
    if (/\b(?:show|open|get|read)\s+(?:me\s+)?(?:the\s+|my\s+)?recipe\b/i.test(said))
      return query(`SELECT * FROM saved_recipes WHERE id = '${id}'`);
  }

  const find =
    /\b(?:find|search(?:\s+for)?|which)\s+(?:my\s+)?(?:saved\s+)?recipes?\s+(?:with|containing|using|for|that\s+use)\s+(.+?)\s*[?.!]*$/i.exec(
      text,
    );
  if (find) {
    const term = find[1]!.trim();
    return query(
      `SELECT ${LIST_COLUMNS} FROM saved_recipes WHERE ingredients::text ILIKE ${likeLiteral(term)} OR name ILIKE ${likeLiteral(term)} ORDER BY created_at DESC`,
    );
  }

  const list =
    /\b(?:list|show)\s+(?:me\s+)?(?:all\s+)?my\s+(?:saved\s+)?(recipes|cocktails|drinks|desserts|food|dishes|meals)\b/i.exec(text) ??
    /^\s*my\s+(?:saved\s+)?(recipes|cocktails|desserts)\s*[?.!]*\s*$/i.exec(text);
  if (list) {
    const type = TYPES[list[1]!.toLowerCase()];
    return query(`SELECT ${LIST_COLUMNS} FROM saved_recipes${type ? ` WHERE recipe_type = '${type}'` : ''} ORDER BY created_at DESC`);
  }
  return undefined;
}

type Obj = Record<string, unknown>;

/** A plain reading of an execute_recipe_sql success, or undefined when the value is not one. */
export function describeSqlResult(value: Obj): string | undefined {
  if (value.status !== 'success') return undefined;
  if (typeof value.rows_affected === 'number')
    return typeof value.message === 'string' ? value.message : `${value.rows_affected} rows changed.`;
  if (!Array.isArray(value.rows)) return undefined;
  const rows = value.rows.filter((row): row is Obj => typeof row === 'object' && row !== null);
  const more = typeof value.message === 'string' ? ` ${value.message}` : '';
  if (rows.length === 0) return 'No saved recipes matched.';
  if (rows.length === 1 && Array.isArray(rows[0]!.ingredients) && Array.isArray(rows[0]!.instructions)) return describeRecipe(rows[0]!);
  if (rows.every((row) => typeof row.name === 'string')) {
    const noun = rows.length === 1 ? 'recipe' : 'recipes';
    return `${rows.length} ${noun}: ${rows.map(describeHeader).join('; ')}.${more}`;
  }
  // any other query's rows in words, never JSON: "kind of recipe cocktail, number of recipes 1; …"
  const shown = rows.slice(0, 5).map(describeRow).join('; ');
  const rest = rows.length > 5 ? ` (and ${rows.length - 5} more)` : '';
  return `${rows.length} ${rows.length === 1 ? 'row' : 'rows'}: ${shown}${rest}.${more}`;
}

const ROW_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function describeRow(row: Obj): string {
  return Object.entries(row)
    .map(([key, value]) => {
      const text =
        typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : Array.isArray(value)
            ? value.filter((v) => typeof v !== 'object').join(', ')
            : '';
      return text && !ROW_UUID.test(text) ? `${key.replace(/_/g, ' ')} ${text.length > 80 ? `${text.slice(0, 79)}…` : text}` : '';
    })
    .filter(Boolean)
    .join(', ');
}

function describeHeader(row: Obj): string {
  const details = [
    typeof row.recipe_type === 'string' ? row.recipe_type : undefined,
    typeof row.prep_time === 'number' ? `${row.prep_time} min prep` : undefined,
    typeof row.cook_time === 'number' && row.cook_time > 0 ? `${row.cook_time} min cooking` : undefined,
    typeof row.servings === 'number' ? `serves ${row.servings}` : undefined,
  ].filter(Boolean);
  // by name, never by id: a person reads this (a recipe's card in the chat and My recipes carry the id to act on)
  return `${row.name}${details.length ? ` (${details.join(', ')})` : ''}`;
}

function describeRecipe(row: Obj): string {
  const ingredients = (row.ingredients as unknown[])
    .map((item) => {
      if (typeof item !== 'object' || item === null) return String(item);
      const { quantity, unit, name } = item as Obj;
      return [quantity, unit, name].filter((part) => typeof part === 'string' && part).join(' ');
    })
    .join(', ');
  const steps = (row.instructions as unknown[]).map((step, index) => `${index + 1}) ${String(step)}`).join(' ');
  return `${describeHeader(row)}. Ingredients: ${ingredients || 'none listed'}. Steps: ${steps || 'none listed'}`;
}

/** What the recipes agent teaches the offline model: the save pipeline's tasks and its phrasings. */
export const recipesOffline: AgentOffline = {
  tasks: { recipe_structuring: recipeStructuring, recipe_image_prompt: recipeImagePrompt },
  images: { recipe_image: recipeImage },
  phrases: [...RECIPES_OFFLINE_PHRASES, { tool: 'save_recipe', examples: [SAVE_RECIPE_EXAMPLE] }],
  rules: [
    // First of all: a recipe's text may say anything ("order", "list my recipes"), and all of it is the recipe.
    { rank: 10, tool: 'save_recipe', match: matchSaveRecipe },
    // after the beer finder's phrasings, before the support agent's
    { rank: 30, tool: TOOL, match: matchRecipesSql },
  ],
  // rows read as saved recipes only from the recipes tool; other SQL tools (beer analytics) bring their own message
  describe: {
    [TOOL]: (value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? describeSqlResult(value as Obj) : undefined),
  },
};
