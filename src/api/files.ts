// The local object store's files (recipe images on the embedded default), for <img> tags: no bearer token.
// What keeps one user's image from another is the key: recipes/<uuid>.png, where the uuid is random (made
// in the saveRecipe workflow) and never listed. An image is served only while its recipe exists and is
// not deleted, and browsers revalidate it each time, so a deletion takes effect at once. With
// GCS_BUCKET_NAME set, images are in the bucket instead and this route answers 404.
import fs from 'node:fs';
import express from 'express';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { localObjectsRoot } from '../storage/index.ts';
import { localPath } from '../storage/local-store.ts';
import { HttpError } from './http-error.ts';

const IMAGE_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png$/;

export function fileRoutes(config: Pick<Config, 'DATA_DIR' | 'GCS_BUCKET_NAME'>, pool: pg.Pool): express.Router {
  const router = express.Router();
  const root = localObjectsRoot(config);
  router.get('/files/recipes/:name', async (req, res, next) => {
    const name = req.params.name;
    if (config.GCS_BUCKET_NAME || !IMAGE_NAME.test(name)) return next(new HttpError(404, 'No such file'));
    const live = await pool.query<{ live: boolean }>({
      name: 'brigade.recipe_image_live',
      text: 'SELECT brigade_recipe_image_live($1) AS live',
      values: [name.slice(0, -'.png'.length)],
    });
    if (!live.rows[0]?.live) return next(new HttpError(404, 'No such file'));
    const stream = fs.createReadStream(localPath(root, `recipes/${name}`));
    stream.once('error', (error: NodeJS.ErrnoException) => {
      next(error.code === 'ENOENT' || error.code === 'EISDIR' ? new HttpError(404, 'No such file') : error);
    });
    stream.once('open', () => {
      res.writeHead(200, {
        'Content-Type': 'image/png',
        // Not immutable: the recipe can be deleted, and then its image must stop showing.
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      });
      stream.pipe(res);
    });
  });
  return router;
}
