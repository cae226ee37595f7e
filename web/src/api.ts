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
 * The web sign-in through the server (AUTH_OIDC_*): the session is an HttpOnly cookie the page never sees; the
 * page holds only the CSRF token that its state-changing requests must carry (GET /auth/session).
 */
export interface AuthSession {
  signIn: 'oidc' | 'token';
  signedIn: boolean;
  csrfToken?: string;
}
let csrfToken: string | undefined;
export const setCsrfToken = (token: string | undefined) => {
  csrfToken = token;
};

export async function readAuthSession(): Promise<AuthSession> {
  const response = await fetch('/auth/session', { cache: 'no-store' });
  if (!response.ok) return { signIn: 'token', signedIn: false };
  const session = (await response.json()) as AuthSession;
  setCsrfToken(session.csrfToken);
  return session;
}

/** Ends the cookie session; then the provider's own sign-out, where it has one. */
export async function signOutOfSession(): Promise<void> {
  const response = await fetch('/auth/logout', { method: 'POST', headers: csrfToken ? { 'x-csrf-token': csrfToken } : {} }).catch(
    () => undefined,
  );
  setCsrfToken(undefined);
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
 * The headers that carry the bearer token, for `path` only when it is the API's own: decided on the
 * parsed URL (a string test would take `//other-host/` or `/\other-host/` for a path), same origin as
 * the page and under /v1/, the one prefix whose routes need the token.
 */
export function authorizationFor(path: string): Record<string, string> {
  const url = new URL(path, window.location.href);
  const token = tokenStore.get();
  if (!token || url.origin !== window.location.origin || !url.pathname.startsWith('/v1/')) return {};
  return { authorization: `Bearer ${token}` };
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
        ...(csrfToken && method !== 'GET' && method !== 'HEAD' ? { 'x-csrf-token': csrfToken } : {}),
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
