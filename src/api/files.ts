// The local object store's files that agents publish (AgentServer.publicFiles), for <img> tags: no bearer
// token, since a browser sends none with an image. What keeps one user's file from another is its name,
// made from a random uuid in a workflow and never listed. A file is served only while its agent says it is
// live, and browsers revalidate it each time, so a deletion takes effect at once. With GCS_BUCKET_NAME
// set, files are in the bucket instead and this route answers 404.
import fs from 'node:fs';
import express from 'express';
import type pg from 'pg';
import type { AgentServer } from './agent-server.ts';
import type { Config } from '../config.ts';
import { localObjectsRoot } from '../storage/index.ts';
import { localPath } from '../storage/local-store.ts';
import { HttpError } from './http-error.ts';

type PublicFiles = NonNullable<AgentServer['publicFiles']>;

export function fileRoutes(
  config: Pick<Config, 'DATA_DIR' | 'GCS_BUCKET_NAME'>,
  pool: pg.Pool,
  published: readonly PublicFiles[],
): express.Router {
  const router = express.Router();
  const root = localObjectsRoot(config);
  const byPrefix = new Map(published.map((files) => [files.prefix, files]));
  router.get('/files/:prefix/:name', async (req, res, next) => {
    const { prefix, name } = req.params;
    const files = byPrefix.get(prefix);
    if (config.GCS_BUCKET_NAME || !files || !files.name.test(name)) return next(new HttpError(404, 'No such file'));
    if (!(await files.isLive(pool, name))) return next(new HttpError(404, 'No such file'));
    const stream = fs.createReadStream(localPath(root, `${prefix}/${name}`));
    stream.once('error', (error: NodeJS.ErrnoException) => {
      next(error.code === 'ENOENT' || error.code === 'EISDIR' ? new HttpError(404, 'No such file') : error);
    });
    stream.once('open', () => {
      res.writeHead(200, {
        'Content-Type': files.contentType,
        // Not immutable: what a file shows can be deleted, and then it must stop showing.
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      });
      stream.pipe(res);
    });
  });
  return router;
}
