// Headers that make the browser refuse what the web client never needs: scripts or styles from elsewhere,
// inline script, framing, plugins, and images or connections to any origin but the API's own and the
// configured image store's. A stored URL that slipped past the API's checks still cannot reach another
// host from the page.
import type express from 'express';
import type { Config } from '../config.ts';
import { publicBaseUrl } from '../storage/index.ts';

type ImageConfig = Pick<Config, 'GCS_BUCKET_NAME' | 'STORAGE_EMULATOR_HOST' | 'PUBLIC_URL' | 'HOST' | 'PORT'>;

/** Where recipe images come from besides the page's own origin: the store's public address. */
export function imageOrigins(config: ImageConfig): string[] {
  if (config.GCS_BUCKET_NAME) {
    return [config.STORAGE_EMULATOR_HOST ? new URL(config.STORAGE_EMULATOR_HOST).origin : 'https://storage.googleapis.com'];
  }
  return [new URL(publicBaseUrl(config)).origin];
}

export function contentSecurityPolicy(config: ImageConfig): string {
  return [
    "default-src 'self'",
    // data: for the empty favicon of index.html
    `img-src 'self' data: ${imageOrigins(config).join(' ')}`,
    "connect-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function securityHeaders(config: ImageConfig): express.RequestHandler {
  const policy = contentSecurityPolicy(config);
  return (_req, res, next) => {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-site');
    res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    next();
  };
}
