// Temporal's codec server protocol on the API's port (docs/operations.md): the Web UI and `temporal workflow
// show --codec-endpoint` POST the payloads they hold to /codec/decode (and /codec/encode, for what they send)
// and show what comes back. Decoding reveals conversations, so only an operator may, and only with a bearer
// token through the front door: the Web UI's own OpenID access token (its codec setting "pass access token"),
// an operator's API key or API_TOKENS token for the CLI. No cookie is taken (issue 42): the web sign-in's
// cookie reaches every port of the API's host and a request's Origin header is anyone's to write. The Web UI's
// origin alone gets CORS, without credentials; its preflight (which carries no token) is answered first.
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { principalOf } from './auth-types.ts';
import { jsonBody } from './body.ts';
import { HttpError, parseBody } from './http-error.ts';
import { requireScope } from './key-scopes.ts';

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
 * CORS for the Web UI's origins only (exact, never `*`): the UI sends a JSON body, X-Namespace and, with
 * passAccessToken, Authorization (its access token) and Authorization-Extras (its ID token). No credentials:
 * a browser's cookies are no way in here.
 */
function codecCors(allowed: ReadonlySet<string>) {
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.header('Origin');
    if (!origin) return next();
    res.vary('Origin');
    const permitted = allowed.has(origin);
    if (permitted) res.setHeader('Access-Control-Allow-Origin', origin);
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
  /** the Web UI's origins (TEMPORAL_UI_URL, or the dev server's UI) */
  uiOrigins: readonly string[];
  /** the namespace Brigade's payloads live in; another (X-Namespace) is refused */
  namespace: string;
}

/**
 * A bearer token, through the front door; nothing else. Without an Authorization header the request is refused
 * here, before the front door could take the web sign-in's cookie.
 */
function bearerOnly(authenticate: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (req.headers.authorization !== undefined) return authenticate(req, res, next);
    res.setHeader('WWW-Authenticate', 'Bearer realm="brigade"');
    next(
      new HttpError(
        401,
        'The codec server takes a bearer token only (the Web UI\'s access token with "pass access token", or an operator\'s API key); never a cookie',
      ),
    );
  };
}

export function codecServerRoutes({ codec, authenticate, uiOrigins, namespace }: CodecServerDeps): Router {
  const router = Router();
  const allowed = new Set(uiOrigins.map((origin) => new URL(origin).origin));
  router.use(codecCors(allowed));
  router.use(bearerOnly(authenticate));
  router.use((_req, res, next) => {
    if (!principalOf(res).roles.includes(OPERATOR_ROLE))
      return next(new HttpError(403, `The codec server is for operators: the token needs the "${OPERATOR_ROLE}" role`));
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
