// Files an MCP tool answered with (images, audio, binary resources), from the local object store, for <img>
// and <audio> tags: no bearer token. The key is mcp/<conversation uuid>/<call id>-<n>.<ext>, both ids random
// and never listed. Raster images and audio are served as what they are; anything else (an SVG, a PDF, a
// blob) only as a download, so no server's file runs as a page of ours. With GCS_BUCKET_NAME set, the files
// are in the bucket instead and this route answers 404.
import fs from 'node:fs';
import express from 'express';
import type { Config } from '../config.ts';
import { localObjectsRoot } from '../storage/index.ts';
import { localPath } from '../storage/local-store.ts';
import { HttpError } from './http-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-s\d+)?\.\d+-\d+\.([a-z0-9]{1,8})$/i;
const INLINE: Record<string, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  mpeg: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
};

export function mcpFileRoutes(config: Pick<Config, 'DATA_DIR' | 'GCS_BUCKET_NAME'>): express.Router {
  const router = express.Router();
  const root = localObjectsRoot(config);
  router.get('/files/mcp/:conversation/:name', (req, res, next) => {
    const { conversation, name } = req.params;
    const extension = NAME.exec(name)?.[1]?.toLowerCase();
    if (config.GCS_BUCKET_NAME || !UUID.test(conversation) || !extension) return next(new HttpError(404, 'No such file'));
    const stream = fs.createReadStream(localPath(root, `mcp/${conversation}/${name}`));
    stream.once('error', (error: NodeJS.ErrnoException) => {
      next(error.code === 'ENOENT' || error.code === 'EISDIR' ? new HttpError(404, 'No such file') : error);
    });
    stream.once('open', () => {
      const type = INLINE[extension];
      res.writeHead(200, {
        'Content-Type': type ?? 'application/octet-stream',
        ...(type ? {} : { 'Content-Disposition': 'attachment' }),
        'Cache-Control': 'private, max-age=3600',
        'X-Content-Type-Options': 'nosniff',
      });
      stream.pipe(res);
    });
  });
  return router;
}
