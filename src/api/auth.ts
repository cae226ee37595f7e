import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { TokenGrant } from '../config.ts';
import { HttpError } from './http-error.ts';

export type Principal = TokenGrant;

const digest = (token: string) => createHash('sha256').update(token).digest();

/** Bearer tokens: compared by digest in constant time, so neither timing nor a log line leaks a token. */
export function bearerAuth(tokens: Record<string, TokenGrant>) {
  const grants = Object.entries(tokens).map(([token, grant]) => ({ digest: digest(token), grant }));
  return (req: Request, res: Response, next: NextFunction) => {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const presented = match ? digest(match[1]!) : undefined;
    const found = presented && grants.find((entry) => timingSafeEqual(entry.digest, presented));
    if (!found) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return next(new HttpError(401, match ? 'The bearer token is not valid' : 'A bearer token is required (Authorization: Bearer <token>)'));
    }
    res.locals.principal = found.grant;
    next();
  };
}

export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
