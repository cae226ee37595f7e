import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

// A caller's own id is kept when it is short and plain, so a log line can never be forged through it.
const PLAIN_ID = /^[\w.:-]{1,128}$/;

/** Every response carries X-Request-Id; a 500 logs it, so a user's report leads to the log line. */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.header('X-Request-Id');
    const id = given && PLAIN_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
