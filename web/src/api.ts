// The only way the client talks to Brigade: the public HTTP API with the bearer token from sign-in.
import { connection } from './connection';

const TOKEN_KEY = 'brigade.token';

export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** `#token=...` from the dev sign-in link: taken into session storage and removed from the address bar. */
export function takeTokenFromFragment(): string | undefined {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (!match) return undefined;
  const token = decodeURIComponent(match[1]!);
  tokenStore.set(token);
  history.replaceState(null, '', window.location.pathname + window.location.search);
  return token;
}

/**
 * The web sign-in through the server (AUTH_OIDC_*): the session is an HttpOnly cookie the page never sees, and
 * the cookie counts only with the session's proof, which this page alone holds. The cookie reaches every port of
 * this host; the proof is in this origin's local storage, which no other port's page can read. It arrives once,
 * in the sign-in's redirect fragment, and is taken only by a tab that started a sign-in: a link from elsewhere
 * carrying someone else's proof (with their cookie planted beside it) would otherwise sign this browser in as them.
 */
export interface AuthSession {
  signIn: 'oidc' | 'token';
  /** this browser has a session cookie and this page proved it */
  signedIn: boolean;
  /** this browser has a live session cookie, proved or not */
  cookieSession?: boolean;
}
const PROOF_KEY = 'brigade.session-proof';
const PENDING_KEY = 'brigade.sign-in-pending';
const PROOF_HEADER = 'x-brigade-session-proof';

export const sessionProof = {
  get: (): string | null => localStorage.getItem(PROOF_KEY),
  clear: () => localStorage.removeItem(PROOF_KEY),
};

/** Said by the Sign in link before it leaves for the provider: this tab (session storage) expects a proof back. */
export const startingSignIn = () => sessionStorage.setItem(PENDING_KEY, '1');

/**
 * `#session-proof=...` from the sign-in's redirect: kept when this tab started a sign-in, and removed from the
 * address bar either way. Answers whether a proof was offered that this tab did not ask for.
 */
export function takeSessionProofFromFragment(): { taken: boolean; refused: boolean } {
  const match = /(?:^#|&)session-proof=([A-Za-z0-9_-]{43})(?:&|$)/.exec(window.location.hash);
  const pending = sessionStorage.getItem(PENDING_KEY) !== null;
  if (!match) return { taken: false, refused: false };
  history.replaceState(null, '', window.location.pathname + window.location.search);
  if (!pending) return { taken: false, refused: true };
  sessionStorage.removeItem(PENDING_KEY);
  localStorage.setItem(PROOF_KEY, match[1]!);
  return { taken: true, refused: false };
}

/** The proof header for the API's own routes (same origin, /v1/ or /auth/), when this page holds one. */
function proofFor(url: URL): Record<string, string> {
  const proof = sessionProof.get();
  if (!proof || url.origin !== window.location.origin || !/^\/(v1|auth)\//.test(url.pathname)) return {};
  return { [PROOF_HEADER]: proof };
}

export async function readAuthSession(): Promise<AuthSession> {
  const response = await fetch('/auth/session', { cache: 'no-store', headers: proofFor(new URL('/auth/session', window.location.href)) });
  if (!response.ok) return { signIn: 'token', signedIn: false };
  const session = (await response.json()) as AuthSession;
  // a proof that does not fit the cookie is of a session this browser no longer has
  if (!session.signedIn) sessionProof.clear();
  return session;
}

/** Ends the cookie session; then the provider's own sign-out, where it has one. */
export async function signOutOfSession(): Promise<void> {
  const response = await fetch('/auth/logout', { method: 'POST', headers: proofFor(new URL('/auth/logout', window.location.href)) }).catch(
    () => undefined,
  );
  sessionProof.clear();
  const body = (await response?.json().catch(() => undefined)) as { endSessionUrl?: string | null } | undefined;
  window.location.assign(body?.endSessionUrl || '/');
}

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly serverMessage: string;
  readonly fields: FieldError[];
  readonly retryAfter?: number;
  constructor(status: number, serverMessage: string, fields: FieldError[] = [], retryAfter?: number) {
    super(humanize(status, serverMessage, retryAfter));
    this.status = status;
    this.serverMessage = serverMessage;
    this.fields = fields;
    this.retryAfter = retryAfter;
  }
}

/** What a person should read for each status, with the server's own words where they help. */
export function humanize(status: number, message: string, retryAfter?: number): string {
  switch (status) {
    case 0:
      return 'Brigade cannot be reached right now; nothing you typed was lost.';
    case 400:
      return `That was not accepted: ${message}`;
    case 401:
      return 'The token was refused. Sign in again with a valid token.';
    case 403:
      return `Your token may not do that: ${message}. Ask an administrator for the role.`;
    case 404:
      return 'Not found: it does not exist, or it is not yours.';
    case 409:
      return `Not now: ${message}`;
    case 413:
      return 'That is too long to send.';
    case 422:
      return `That decision does not fit: ${message}`;
    case 503:
      return `Brigade is busy or partly down for a moment. Try again${retryAfter ? ` in ${retryAfter} seconds` : ' shortly'}; nothing you typed was lost.`;
    default:
      return status >= 500 ? 'Something went wrong on our side. Try again; nothing you typed was lost.' : message;
  }
}

/** "args: x: must be...; y: ..." from a 422 or 400 message, as per-field errors. */
export function fieldErrorsOf(error: ApiError): FieldError[] {
  if (error.fields.length) return error.fields.map((f) => ({ field: f.field.replace(/^args\./, ''), message: f.message }));
  const tail = error.serverMessage.replace(/^[^:]*do not fit [^:]*:\s*/, '');
  return tail
    .split(/;\s*/)
    .map((part) => /^([\w.]+|\(arguments\)):\s*(.+)$/.exec(part.trim()))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ field: m[1]!.replace(/^args\./, ''), message: m[2]!.replace(/\.$/, '') }));
}

let onUnauthorized: () => void = () => undefined;
export const setUnauthorizedHandler = (handler: () => void) => {
  onUnauthorized = handler;
};

/**
 * The headers that carry the bearer token, or else the session's proof, for `path` only when it is the API's
 * own: decided on the parsed URL (a string test would take `//other-host/` or `/\other-host/` for a path), same
 * origin as the page and under /v1/, the one prefix whose routes need the token.
 */
export function authorizationFor(path: string): Record<string, string> {
  const url = new URL(path, window.location.href);
  if (url.origin !== window.location.origin || !url.pathname.startsWith('/v1/')) return {};
  const token = tokenStore.get();
  return token ? { authorization: `Bearer ${token}` } : proofFor(url);
}

export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  init: { idempotencyKey?: string; signal?: AbortSignal } = {},
): Promise<T> {
  let response: Response;
  const startedAt = connection.started();
  try {
    response = await fetch(path, {
      method,
      signal: init.signal,
      headers: {
        ...authorizationFor(path),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.idempotencyKey ? { 'idempotency-key': init.idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    connection.failed(startedAt);
    throw new ApiError(0, 'network error');
  }
  connection.answered(startedAt);
  const text = await response.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { error: text.slice(0, 300) };
  }
  if (!response.ok) {
    if (response.status === 401) onUnauthorized();
    const retry = Number(response.headers.get('retry-after') ?? parsed?.retryAfter) || undefined;
    throw new ApiError(response.status, parsed?.error ?? response.statusText, parsed?.fields ?? [], retry);
  }
  return parsed as T;
}

// crypto.randomUUID needs a secure context; a LAN address over http is not one.
export const newIdempotencyKey = () =>
  `web-${typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`}`;
