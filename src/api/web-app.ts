// Serves the web client (web/dist) at `/` with an SPA fallback. It never shadows the API: /v1, /openapi.json,
// /healthz, /readyz and /files are answered before this, and unknown paths under them stay JSON 404s.
import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response, type NextFunction } from 'express';
import { WEB_DIST, WEB_ROOT, webBuildState } from './web-build-state.ts';

const API_PATHS = /^\/(?:v1(?:\/|$)|files\/|openapi\.json$|healthz$|readyz$)/;

export function webAppRoutes(root = WEB_ROOT): express.Router {
  const router = express.Router();
  const dist = root === WEB_ROOT ? WEB_DIST : path.join(root, 'dist');
  const state = webBuildState(root);
  if (state === 'stale' || state === 'missing') {
    // A stale build is not served silently: the page says what to run (npm start rebuilds before serving).
    router.get('/', (_req, res) => {
      res
        .status(503)
        .type('text/plain')
        .send(
          `The web client's build is ${state === 'missing' ? 'missing' : 'out of date'}. Run "npm run build:web" (npm start does this itself), then reload.\n`,
        );
    });
    return router;
  }
  router.use('/assets', express.static(path.join(dist, 'assets'), { immutable: true, maxAge: '1y', fallthrough: false }));
  router.use(express.static(dist, { index: false }));
  const indexHtml = path.join(dist, 'index.html');
  router.get(/.*/, (req: Request, res: Response, next: NextFunction) => {
    if (API_PATHS.test(req.path) || !req.accepts('html') || !fs.existsSync(indexHtml)) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(indexHtml);
  });
  return router;
}
