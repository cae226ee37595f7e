// Temporal's codec server protocol on the API's port (docs/operations.md): the Web UI and `temporal workflow
// show --codec-endpoint` POST the payloads they hold to /codec/decode (and /codec/encode, for what they send)
// and show what comes back. Decoding reveals conversations, so only an operator may: a bearer token (API_TOKENS,
// an API key, an OpenID access token) with the `operator` role, or, from the Web UI's origin alone, the web
// sign-in's session cookie of a person with that role (the UI's "include cross-origin credentials": the UI and
// the API are the same site, so the browser sends the SameSite=Strict cookie). The Web UI's origin alone gets
// CORS, with credentials; its preflight (which carries no credentials) is answered first.
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { principalOf } from './auth-types.ts';
import { jsonBody } from './body.ts';
import { HttpError, parseBody } from './http-error.ts';
import { requireScope } from './key-scopes.ts';
import type { WebSessions } from './web-sign-in.ts';

export const OPERATOR_ROLE = 'operator';
/** a Web UI page of history asks for many payloads at once; each is at most what Temporal accepts (2 MB by default) */
export const CODEC_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

const base64 = z
  .string()
  .max(CODEC_BODY_LIMIT_BYTES)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
export const CodecBody = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string().max(200), base64).optional(), data: base64.optional() })).max(10_000),
});
type CodecBody = z.infer<typeof CodecBody>;

const fromJson = (payload: CodecBody['payloads'][number]): Payload => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([name, value]) => [name, Buffer.from(value, 'base64')])),
  data: Buffer.from(payload.data ?? '', 'base64'),
});
const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([name, value]) => [name, Buffer.from(value ?? new Uint8Array()).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
});

/**
 * CORS for the Web UI's origins only (exact, never `*`, since credentials are allowed): the UI sends a JSON body,
 * X-Namespace and, with passAccessToken, Authorization (its access token) and Authorization-Extras (its ID token).
 */
function codecCors(allowed: ReadonlySet<string>) {
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.header('Origin');
    if (!origin) return next();
    res.vary('Origin');
    const permitted = allowed.has(origin);
    if (permitted) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      // the UI's "include cross-origin credentials": the browser sends the web sign-in's cookie and may read the answer
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    if (req.method !== 'OPTIONS') return next();
    if (!permitted)
      return next(new HttpError(403, "This origin may not call the codec server; set TEMPORAL_UI_URL to the Web UI's address"));
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Authorization-Extras, Content-Type, X-Namespace');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}

export interface CodecServerDeps {
  /** undefined when PAYLOAD_ENCRYPTION=off: the routes say so instead of passing payloads through */
  codec: PayloadCodec | undefined;
  /** the API's front door (API_TOKENS, API keys, OIDC access tokens): an operator signs in as anywhere else */
  authenticate: RequestHandler;
  /** the web sign-in's sessions, when it is configured: a request without a bearer token may come with the cookie */
  sessions?: WebSessions;
  /** the Web UI's origins (TEMPORAL_UI_URL, or the dev server's UI) */
  uiOrigins: readonly string[];
  /** the namespace Brigade's payloads live in; another (X-Namespace) is refused */
  namespace: string;
}

/**
 * A bearer token goes through the front door. The session cookie is taken here instead, without the CSRF token
 * the front door asks of a cookie (the UI cannot send one): decode and encode change nothing, and what they
 * answer only the Web UI's origin may read (CORS). A cookie is taken only from that origin and with a JSON body,
 * which a page of another origin cannot send without a preflight that is refused.
 */
function codecAuthentication(
  authenticate: RequestHandler,
  sessions: WebSessions | undefined,
  allowed: ReadonlySet<string>,
): RequestHandler {
  return async (req, res, next) => {
    if (req.headers.authorization !== undefined || !sessions) return authenticate(req, res, next);
    const session = await sessions.principal(req);
    if (!session) return authenticate(req, res, next);
    const origin = req.header('Origin');
    if (!origin || !allowed.has(origin))
      throw new HttpError(403, "The codec server takes the sign-in cookie only from the Web UI's origin (TEMPORAL_UI_URL)");
    if (!req.is('application/json')) throw new HttpError(415, 'The codec server takes a JSON body (Content-Type: application/json)');
    res.locals.principal = session.principal;
    next();
  };
}

export function codecServerRoutes({ codec, authenticate, sessions, uiOrigins, namespace }: CodecServerDeps): Router {
  const router = Router();
  const allowed = new Set(uiOrigins.map((origin) => new URL(origin).origin));
  router.use(codecCors(allowed));
  router.use(codecAuthentication(authenticate, sessions, allowed));
  router.use((_req, res, next) => {
    if (!principalOf(res).roles.includes(OPERATOR_ROLE))
      return next(new HttpError(403, `The codec server is for operators: the token or signed-in person needs the "${OPERATOR_ROLE}" role`));
    requireScope(principalOf(res), 'operator');
    next();
  });
  router.use(jsonBody(CODEC_BODY_LIMIT_BYTES));
  for (const action of ['decode', 'encode'] as const) {
    router.post(`/${action}`, async (req, res) => {
      const asked = req.header('X-Namespace');
      if (asked && asked !== namespace)
        throw new HttpError(404, `No payloads of namespace "${asked.slice(0, 100)}" here (this is ${namespace})`);
      if (!codec) throw new HttpError(404, 'Payload encryption is off (PAYLOAD_ENCRYPTION=off): there is nothing to decode');
      const { payloads } = parseBody(CodecBody, req.body);
      let out: Payload[];
      try {
        out = await codec[action](payloads.map(fromJson));
      } catch (error) {
        // a wrong key id or a tampered payload: the caller's input, said without the key material
        throw new HttpError(400, `The payloads could not be ${action}d: ${(error as Error).message}`);
      }
      res.setHeader('Cache-Control', 'no-store');
      res.json({ payloads: out.map(toJson) });
    });
  }
  return router;
}
