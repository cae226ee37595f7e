import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.ts';

const ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Request-Id';
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, Idempotent-Replayed';

/**
 * CORS for a web client served from another origin: only the exact origins in CORS_ORIGINS, echoed one at
 * a time (never `*`). No credentials mode: the API authenticates by bearer token, never by cookie, so a
 * browser never sends an ambient credential. With no origins configured, no CORS header is sent and a
 * browser on another origin cannot read any answer.
 */
export function cors(origins: readonly string[]) {
  const allowed = new Set(origins.map((origin) => new URL(origin).origin));
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.header('Origin');
    if (!origin || allowed.size === 0) return next();
    res.vary('Origin');
    const permitted = allowed.has(origin);
    if (permitted) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    const preflight = req.method === 'OPTIONS' && req.header('Access-Control-Request-Method') !== undefined;
    if (!preflight) return next();
    if (!permitted) return next(new HttpError(403, 'This origin may not call the API from a browser; add it to CORS_ORIGINS'));
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}
