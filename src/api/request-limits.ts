// Limits on requests themselves (issue 42), beside the per-user limits on what requests make
// (user-limits.ts): every authenticated request counts against its user, GET included, and a refused one (401,
// before anyone is known) against its client address. They guard this process's own time and its PostgreSQL
// connections, so they are counted in its memory: a count in PostgreSQL would cost every request a write,
// the very load they are there to bound. With n API processes behind a balancer, a user gets up to n times
// the rate, and each process stays as responsive as one alone. Over a limit: 429 with Retry-After.
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from '../config.ts';
import { principalOf } from './auth-types.ts';
import { HttpError } from './http-error.ts';

export type RequestLimitSettings = Pick<Config, 'USER_REQUESTS_PER_MINUTE' | 'USER_CONCURRENT_REQUESTS' | 'AUTH_REFUSALS_PER_MINUTE'>;

const WINDOW_MS = 60_000;
/** accepted credentials (digests) a process remembers, each for 10 minutes */
const REMEMBERED = 10_000;
/**
 * A refusal is answered after this long. A 429 costs little, but a client that sends again as soon as it is
 * answered (40 requests in parallel, in a loop) gets 429s as fast as the process can write them, and that alone
 * took the event loop from everyone else (another user's median read went from 2 to 47 ms). Held for a second,
 * such a loop sends 40 requests a second, and the process is others' again. A client that honours Retry-After
 * waits longer than that anyway.
 */
export const REFUSAL_DELAY_MS = 1_000;

/** `next(error)` after REFUSAL_DELAY_MS; the timer does not keep a stopping process alive */
function refuseLater(next: NextFunction, error: HttpError): void {
  setTimeout(() => next(error), REFUSAL_DELAY_MS).unref();
}
/** how many keys (users, addresses) a window map holds before its finished windows are dropped */
const PRUNE_AT = 10_000;

/** Counts per key in fixed one-minute windows, as the PostgreSQL limits count (user-limits.ts). */
class MinuteCounts {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly now: () => number;
  constructor(now: () => number) {
    this.now = now;
  }

  /** adds one; answers the count in this minute and the seconds until it ends */
  add(key: string): { count: number; retryAfter: number } {
    const now = this.now();
    const start = now - (now % WINDOW_MS);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      if (this.windows.size >= PRUNE_AT) for (const [old, at] of this.windows) if (at.start !== start) this.windows.delete(old);
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count++;
    return { count: window.count, retryAfter: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)) };
  }

  count(key: string): { count: number; retryAfter: number } {
    const now = this.now();
    const window = this.windows.get(key);
    if (!window || window.start !== now - (now % WINDOW_MS)) return { count: 0, retryAfter: 0 };
    return { count: window.count, retryAfter: Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000)) };
  }
}

/** An event stream stays open for as long as the client reads it; USER_EVENT_STREAMS bounds those. */
const isEventStream = (req: Request) => req.method === 'GET' && /\/events\/?$/.test(req.path);

/**
 * After authentication: the user's requests per minute (every method) and requests in flight at once. The
 * second is what keeps one user's flood of parallel requests from taking every PostgreSQL connection of the
 * process while others wait behind it: past it the answer is a 429 (after REFUSAL_DELAY_MS), which costs next to nothing.
 */
export function userRequestLimits(settings: RequestLimitSettings, now: () => number = Date.now): RequestHandler {
  const perMinute = new MinuteCounts(now);
  const inFlight = new Map<string, number>();
  return (req: Request, res: Response, next: NextFunction) => {
    const { user } = principalOf(res);
    if (settings.USER_REQUESTS_PER_MINUTE > 0) {
      const { count, retryAfter } = perMinute.add(user);
      if (count > settings.USER_REQUESTS_PER_MINUTE) {
        const limit = settings.USER_REQUESTS_PER_MINUTE;
        return refuseLater(
          next,
          new HttpError(429, `Too many requests: at most ${limit} a minute; try again in ${retryAfter} s`, { retryAfter }),
        );
      }
    }
    if (settings.USER_CONCURRENT_REQUESTS <= 0 || isEventStream(req)) return next();
    const running = inFlight.get(user) ?? 0;
    if (running >= settings.USER_CONCURRENT_REQUESTS) {
      return refuseLater(
        next,
        new HttpError(429, `Too many requests at once: at most ${settings.USER_CONCURRENT_REQUESTS}; try again when one has answered`, {
          retryAfter: 1,
        }),
      );
    }
    inFlight.set(user, running + 1);
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      const left = (inFlight.get(user) ?? 1) - 1;
      if (left > 0) inFlight.set(user, left);
      else inFlight.delete(user);
    };
    // 'close' comes once the answer is sent or the client went away, whichever is first
    res.once('close', release);
    next();
  };
}

/** What identifies a credential without keeping it: the digest of the Authorization header, or of the cookies. */
const credentialOf = (req: Request): string | undefined => {
  const presented = req.headers.authorization ?? req.headers.cookie;
  return presented ? createHash('sha256').update(presented).digest('base64url') : undefined;
};

/**
 * Around the front door: refusals (401) count per client address; past AUTH_REFUSALS_PER_MINUTE in a minute the
 * address's requests are answered 429 before any token is looked at (an API key costs a query, a JWT a
 * signature check), except those whose credential this process accepted lately. So a flood of bad or guessed
 * credentials is cheap to refuse, and people behind the same address (a NAT, a proxy with TRUST_PROXY unset)
 * who were signed in already go on working; only a first sign-in from that address waits for the minute.
 */
export function refusalLimits(frontDoor: RequestHandler, settings: RequestLimitSettings, now: () => number = Date.now): RequestHandler {
  const refusals = new MinuteCounts(now);
  const accepted = new Map<string, number>();
  const remember = (credential: string) => {
    accepted.delete(credential); // the Map's order is by last acceptance: the oldest goes first
    if (accepted.size >= REMEMBERED) accepted.delete(accepted.keys().next().value!);
    accepted.set(credential, now());
  };
  const rememberedLately = (credential: string | undefined) => {
    const at = credential === undefined ? undefined : accepted.get(credential);
    return at !== undefined && now() - at < 10 * WINDOW_MS;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const credential = credentialOf(req);
    const limit = settings.AUTH_REFUSALS_PER_MINUTE;
    if (limit > 0 && !rememberedLately(credential)) {
      const { count, retryAfter } = refusals.count(address);
      if (count >= limit) {
        return refuseLater(
          next,
          new HttpError(429, `Too many refused requests from this address: at most ${limit} a minute; try again in ${retryAfter} s`, {
            retryAfter,
          }),
        );
      }
    }
    frontDoor(req, res, (error?: unknown) => {
      if (error instanceof HttpError && error.status === 401) {
        if (limit > 0) refusals.add(address);
      } else if (!error && credential !== undefined && res.locals.principal) {
        remember(credential);
      }
      next(error);
    });
  };
}
