// What the save_recipe tests share: the example recipe of docs/agents/recipes.md, PNG checks, and database look-ups as admin.
import assert from 'node:assert/strict';
import pg from 'pg';

export const OLD_FASHIONED =
  'Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. ' +
  'Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. ' +
  'Prep time: 5 minutes. Serves: 1. Type: cocktail.';

/** What a structuring model would answer for OLD_FASHIONED. */
export const OLD_FASHIONED_JSON = {
  name: 'Old Fashioned',
  recipe_type: 'cocktail',
  ingredients: [
    { name: 'bourbon', quantity: '2', unit: 'oz', notes: null },
    { name: 'sugar cube', quantity: '1', unit: null, notes: null },
    { name: 'Angostura bitters', quantity: '2', unit: 'dashes', notes: null },
    { name: 'orange peel', quantity: null, unit: null, notes: 'for garnish' },
  ],
  instructions: ['Muddle sugar with bitters', 'Add bourbon and ice', 'Stir', 'Garnish with orange peel'],
  prep_time: 5,
  cook_time: null,
  servings: 1,
  source_references: [],
  notes: null,
  tags: ['bourbon', 'classic'],
};

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Fetches a URL as a browser's <img> would: no bearer header. Asserts it is a PNG. */
export async function fetchPng(url: string): Promise<Buffer> {
  const response = await fetch(url);
  assert.equal(response.status, 200, `GET ${url} answered ${response.status}`);
  const body = Buffer.from(await response.arrayBuffer());
  assert.ok(body.subarray(0, 8).equals(PNG_SIGNATURE), `${url} is not a PNG`);
  return body;
}

export async function adminQuery<T = any>(adminUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
