// Recipe images on the local object store, for <img> tags (GET /files/recipes/<id>.png): served only while
// the recipe exists and is not deleted. The route has no bearer token and so no user for row-level
// security; brigade_recipe_image_live (migration 015) answers only that, nothing else about the recipe.
import type pg from 'pg';
import type { AgentServer, OpenApiHelpers } from '../../api/agent-server.ts';
import { RECIPE_IMAGES, RECIPE_IMAGE_NAME } from './image-keys.ts';

export const recipeImageFiles: NonNullable<AgentServer['publicFiles']> = {
  prefix: RECIPE_IMAGES,
  name: RECIPE_IMAGE_NAME,
  contentType: 'image/png',
  async isLive(pool: pg.Pool, name: string) {
    const { rows } = await pool.query<{ live: boolean }>({
      name: 'brigade.recipe_image_live',
      text: 'SELECT brigade_recipe_image_live($1) AS live',
      values: [name.slice(0, -'.png'.length)],
    });
    return rows[0]?.live === true;
  },
};

export function recipeImagePaths({ json }: OpenApiHelpers): Record<string, unknown> {
  return {
    '/files/recipes/{name}': {
      get: {
        operationId: 'getRecipeImage',
        summary:
          "A saved recipe's image on the local object store (no GCS_BUCKET_NAME): what image_url points at, while the recipe is not deleted. No bearer token: the name is the recipe's random UUID, an unguessable link.",
        security: [],
        parameters: [
          {
            name: 'name',
            in: 'path',
            required: true,
            description: '<recipe id>.png',
            schema: { type: 'string', pattern: '^[0-9a-f-]{36}\\.png$' },
          },
        ],
        responses: {
          200: { description: 'The PNG', content: { 'image/png': {} } },
          404: json('No such image (deleted, or images are in GCS)', 'Error'),
        },
      },
    },
  };
}
