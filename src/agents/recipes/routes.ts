// The caller's saved recipes over HTTP: a list (newest first, filtered, paginated by cursor) and one
// recipe by id. Both run as brigade_app with row-level security, so another user's recipe is a 404
// whether or not it exists.
import { Router } from 'express';
import type { OpenApiHelpers } from '../../api/agent-server.ts';
import type pg from 'pg';
import { z } from 'zod';
import { asUser } from '../../db/pool.ts';
import { type StoreConfig, createObjectStore } from '../../storage/index.ts';
import { recipeImageKey } from './image-keys.ts';
import { RecipeType, SAVED_RECIPE_COLUMNS, SavedRecipe } from './recipe.ts';
import { UNSTORABLE_MESSAGE, isStorableText } from '../../shared/safe-text.ts';
import { principalOf } from '../../api/auth.ts';
import { HttpError, parseBody } from '../../api/http-error.ts';
import { containsPattern } from '../../shared/like-pattern.ts';

const booleanFlag = z.enum(['true', 'false']).transform((value) => value === 'true');

/** An opaque position in the list: the last recipe's creation time and id, base64url. */
const Cursor = z
  .string()
  .max(200)
  .transform((text, ctx) => {
    const [createdAt, id] = Buffer.from(text, 'base64url').toString('utf8').split('|');
    if (!createdAt || !id || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(createdAt) || !z.uuid().safeParse(id).success) {
      ctx.addIssue({ code: 'custom', message: 'is not a cursor this API returned (use nextCursor as given)' });
      return z.NEVER;
    }
    return { createdAt, id };
  });

export const RecipeListQuery = z.object({
  type: RecipeType.optional().describe('only recipes of this type'),
  q: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .refine(isStorableText, UNSTORABLE_MESSAGE)
    .optional()
    .describe('text in the name or in any ingredient name, case-insensitive'),
  deleted: booleanFlag.default(false).describe('true: include soft-deleted recipes'),
  limit: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1)
    .max(100)
    .default(20)
    .describe('page size, 1 to 100'),
  cursor: Cursor.optional().describe('the nextCursor of the previous page'),
});

export const RecipeList = z.object({
  recipes: z.array(SavedRecipe),
  /** pass as `cursor` for the next page; null on the last page */
  nextCursor: z.string().nullable(),
});

const RecipeId = z.object({ id: z.uuid({ error: 'must be a UUID' }) });

const COLUMNS = SAVED_RECIPE_COLUMNS.join(', ');

const cursorOf = (row: { position: string; id: string }) => Buffer.from(`${row.position}|${row.id}`, 'utf8').toString('base64url');

// created_at to the microsecond, so that the cursor compares exactly what PostgreSQL stores
const POSITION = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position`;

/**
 * A row as JSON: timestamps as ISO strings, and image_url only when it is the address the app's store
 * gives this recipe's image. Anything else (written before the column was closed to model SQL, or by
 * hand) would send a browser to a host nobody chose, so it reads as no image.
 */
function toRecipe({ position: _, ...row }: Record<string, unknown>, imageUrlOf: (id: string) => string): Record<string, unknown> {
  return {
    ...row,
    image_url: row.image_url === imageUrlOf(row.id as string) ? row.image_url : null,
    created_at: (row.created_at as Date).toISOString(),
    last_accessed_at: (row.last_accessed_at as Date).toISOString(),
  };
}

export function recipeRoutes({ pool, config }: { pool: pg.Pool; config: StoreConfig }): Router {
  const router = Router();
  const store = createObjectStore(config);
  const imageUrlOf = (id: string) => store.publicUrl(recipeImageKey(id));

  router.get('/recipes', async (req, res) => {
    const principal = principalOf(res);
    const query = parseBody(RecipeListQuery, req.query);
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    if (!query.deleted) where.push('NOT is_deleted');
    if (query.type) where.push(`recipe_type = ${param(query.type)}`);
    if (query.q) {
      const pattern = param(containsPattern(query.q));
      where.push(
        `(name ILIKE ${pattern} OR EXISTS (SELECT 1 FROM jsonb_array_elements(ingredients) AS ingredient
           WHERE jsonb_typeof(ingredient) = 'object' AND ingredient->>'name' ILIKE ${pattern}))`,
      );
    }
    // Keyset pagination: a page never repeats or skips a recipe when others are saved meanwhile.
    if (query.cursor) where.push(`(created_at, id) < (${param(query.cursor.createdAt)}::timestamptz, ${param(query.cursor.id)}::uuid)`);
    const limit = param(query.limit + 1);
    const rows = await asUser(pool, principal.user, async (db) => {
      const result = await db.query(
        `SELECT ${COLUMNS}, ${POSITION} FROM saved_recipes ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
        params,
      );
      return result.rows;
    });
    const page = rows.slice(0, query.limit);
    res.json({
      recipes: page.map((row) => toRecipe(row, imageUrlOf)),
      nextCursor: rows.length > query.limit ? cursorOf(page.at(-1) as { position: string; id: string }) : null,
    });
  });

  router.get('/recipes/:id', async (req, res) => {
    const principal = principalOf(res);
    const { id } = parseBody(RecipeId, req.params);
    // Reading a recipe is what last_accessed_at records.
    const row = await asUser(pool, principal.user, async (db) => {
      const result = await db.query(`UPDATE saved_recipes SET last_accessed_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [id]);
      return result.rows[0] as Record<string, unknown> | undefined;
    });
    if (!row) throw new HttpError(404, 'Recipe not found');
    res.json(toRecipe(row, imageUrlOf));
  });

  return router;
}

/** GET /v1/recipes and /v1/recipes/{id}; the query parameters come from RecipeListQuery. */
export function recipePaths({ json, errors, idParam, schema }: OpenApiHelpers): Record<string, unknown> {
  const { properties } = schema(RecipeListQuery, 'input') as { properties: Record<string, Record<string, unknown>> };
  const parameters = Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: false,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
  return {
    '/v1/recipes': {
      get: {
        operationId: 'listRecipes',
        summary:
          "The caller's saved recipes, newest first; soft-deleted ones only with deleted=true. Paginated: pass nextCursor as cursor.",
        parameters,
        responses: { 200: json('A page of recipes', 'RecipeList'), ...errors(400, 401, 503) },
      },
    },
    '/v1/recipes/{id}': {
      get: {
        operationId: 'getRecipe',
        summary: "One of the caller's recipes (soft-deleted ones too, with is_deleted true); records last_accessed_at",
        parameters: [idParam],
        responses: { 200: json('The recipe', 'Recipe'), ...errors(400, 401, 404, 503) },
      },
    },
  };
}
