// The web client's sign-in through the server (issue 34): Authorization Code with PKCE against the OpenID
// provider, then a session whose secret lives in an HttpOnly, Secure, SameSite=Strict cookie, so no token ever
// reaches page scripts. The session is in PostgreSQL (only its digest), so every API process knows it and
// sign-out ends it everywhere. Cookies are scoped by host, not port, so a server on another port of this host
// receives the cookie (issue 42): the cookie alone therefore grants nothing. Every request made with it, GET
// and the event stream included, carries the session's proof (x-brigade-session-proof), a second secret that
// only the page that signed in holds: the callback hands it over once, in the redirect's URL fragment, which
// browsers never send to a server, and the page keeps it in its origin's storage, which another port cannot
// read. It also stands in for a CSRF token: a page of another origin can neither read it nor send the header
// without a preflight. No endpoint hands it out.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { publicBaseUrl } from '../storage/index.ts';
import type { Principal } from './auth-types.ts';
import { HttpError } from './http-error.ts';
import { InvalidToken, type OidcVerifier, ProviderUnavailable } from './oidc.ts';
import type { UserLedger } from './users.ts';

export const PROOF_HEADER = 'x-brigade-session-proof';
const LOGIN_TTL_S = 600;

type SignInConfig = Pick<
  Config,
  | 'PUBLIC_URL'
  | 'HOST'
  | 'PORT'
  | 'AUTH_OIDC_CLIENT_ID'
  | 'AUTH_OIDC_CLIENT_SECRET'
  | 'AUTH_OIDC_SCOPES'
  | 'AUTH_OIDC_AUDIENCE'
  | 'AUTH_OIDC_AUDIENCE_PARAM'
  | 'AUTH_SESSION_TTL'
>;

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const secret = () => randomBytes(32).toString('base64url');
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function cookies(req: Request): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) jar.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return jar;
}

/** A path on this site to go back to after sign-in; anything else (another host, `//host`, `/\host`) is `/`. */
export function safeReturnPath(value: unknown): string {
  if (typeof value !== 'string' || !/^\/(?![/\\])[\x21-\x7e]*$/.test(value) || value.length > 500) return '/';
  return value;
}

export interface SessionPrincipal {
  principal: Principal;
  /** the request carried the session's proof; without it the cookie stands for nothing */
  proven: boolean;
}

export class WebSessions {
  readonly secure: boolean;
  readonly sessionCookie: string;
  readonly loginCookie: string;

  private readonly pool: pg.Pool;
  private readonly config: SignInConfig;

  constructor(pool: pg.Pool, config: SignInConfig) {
    this.pool = pool;
    this.config = config;
    // __Host-: the browser takes it only with Secure, Path=/ and no Domain, so a sibling subdomain cannot plant one.
    this.secure = publicBaseUrl(config).startsWith('https:');
    this.sessionCookie = this.secure ? '__Host-brigade_session' : 'brigade_session';
    this.loginCookie = this.secure ? '__Host-brigade_login' : 'brigade_login';
  }

  cookie(name: string, value: string, options: { maxAge: number; sameSite: 'Strict' | 'Lax' }): string {
    // Secure even on http://localhost, which browsers count as a secure context.
    return `${name}=${value}; Path=/; HttpOnly; Secure; SameSite=${options.sameSite}; Max-Age=${options.maxAge}`;
  }

  /** Starts a session: its cookie is set on `res`; its proof is answered, for the page alone (the callback's fragment). */
  async start(
    res: Response,
    session: { user: string; name?: string; roles: string[]; client?: string; idToken?: string },
  ): Promise<string> {
    const value = secret();
    const proof = secret();
    await this.pool.query('SELECT brigade_session_start($1, $2, $3, $4, $5, $6, $7, make_interval(secs => $8))', [
      sha256(value),
      sha256(proof),
      session.user,
      session.name ?? null,
      session.roles,
      session.client ?? null,
      session.idToken ?? null,
      this.config.AUTH_SESSION_TTL / 1000,
    ]);
    res.append(
      'Set-Cookie',
      this.cookie(this.sessionCookie, value, { maxAge: Math.floor(this.config.AUTH_SESSION_TTL / 1000), sameSite: 'Strict' }),
    );
    return proof;
  }

  /**
   * The live session the request's cookie names, and whether the request proved it: the proof's digest is
   * compared with the session's in constant time (a missing or malformed proof is compared too, against zeros).
   */
  async principal(req: Request): Promise<SessionPrincipal | undefined> {
    const value = cookies(req).get(this.sessionCookie);
    if (!value || !SECRET_SHAPE.test(value)) return undefined;
    const { rows } = await this.pool.query<{
      user_id: string;
      name: string | null;
      roles: string[];
      client: string | null;
      proof_digest: Buffer;
    }>('SELECT * FROM brigade_session_principal($1)', [sha256(value)]);
    const row = rows[0];
    if (!row) return undefined;
    const header = req.headers[PROOF_HEADER];
    const presented = typeof header === 'string' && SECRET_SHAPE.test(header) ? sha256(header) : Buffer.alloc(32);
    const proven = row.proof_digest.length === presented.length && timingSafeEqual(row.proof_digest, presented);
    return {
      principal: {
        user: row.user_id,
        roles: row.roles,
        ...(row.client ? { client: row.client } : {}),
        ...(row.name ? { name: row.name } : {}),
        via: 'session',
      },
      proven,
    };
  }

  /**
   * Clears this browser's cookie; ends the session itself (everywhere) only when the request proved it, so a
   * server on another port that replays the cookie cannot sign its person out either.
   */
  async end(req: Request, res: Response, session: SessionPrincipal | undefined): Promise<string | undefined> {
    const value = cookies(req).get(this.sessionCookie);
    res.append('Set-Cookie', this.cookie(this.sessionCookie, '', { maxAge: 0, sameSite: 'Strict' }));
    if (!value || !session?.proven) return undefined;
    const { rows } = await this.pool.query<{ id_token: string | null }>('SELECT brigade_session_end($1) AS id_token', [sha256(value)]);
    return rows[0]?.id_token ?? undefined;
  }

  loginState(req: Request): unknown {
    const value = cookies(req).get(this.loginCookie);
    if (!value) return undefined;
    try {
      return JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
  }
}

const LoginState = z.object({ state: z.string(), verifier: z.string(), nonce: z.string(), returnTo: z.string() });
const TokenAnswer = z.object({ access_token: z.string(), id_token: z.string(), token_type: z.string() });

/** GET /auth/session, and with a provider's client configured, /auth/login, /auth/callback and POST /auth/logout. */
export function webSignInRoutes(deps: {
  config: SignInConfig;
  sessions?: WebSessions;
  oidc?: OidcVerifier;
  ledger: UserLedger;
  log: (line: string) => void;
  /** keeps the sign-in's ID token sealed for the person (cross-app MCP servers, src/mcp/cross-app.ts), when any is configured */
  keepIdToken?: (user: string, idToken: string) => Promise<void>;
}): express.Router {
  const { config, sessions, oidc, ledger, log, keepIdToken } = deps;
  const router = express.Router();
  const base = publicBaseUrl(config);
  const redirectUri = `${base}/auth/callback`;
  const signInEnabled = Boolean(sessions && oidc && config.AUTH_OIDC_CLIENT_ID);

  router.get('/auth/session', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const session = signInEnabled ? await sessions!.principal(req) : undefined;
    // Never the proof: only whether this browser has a live session cookie and whether this request proved it.
    // A cookie without its proof is someone else's session (planted from another port) or a page that lost it.
    res.json({
      signIn: signInEnabled ? 'oidc' : 'token',
      signedIn: Boolean(session?.proven),
      cookieSession: Boolean(session),
    });
  });

  if (!signInEnabled) return router;

  router.get('/auth/login', async (req, res) => {
    const metadata = await oidc!.metadata().catch((error: unknown) => {
      throw error instanceof ProviderUnavailable ? new HttpError(503, 'The sign-in provider cannot be reached; try again shortly') : error;
    });
    if (!metadata.authorization_endpoint || !metadata.token_endpoint)
      throw new HttpError(503, 'The sign-in provider publishes no authorization or token endpoint');
    const login = { state: secret(), verifier: secret(), nonce: secret(), returnTo: safeReturnPath(req.query.returnTo) };
    const url = new URL(metadata.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', config.AUTH_OIDC_CLIENT_ID!);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('scope', config.AUTH_OIDC_SCOPES);
    url.searchParams.set('state', login.state);
    url.searchParams.set('nonce', login.nonce);
    url.searchParams.set('code_challenge', createHash('sha256').update(login.verifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
    if (config.AUTH_OIDC_AUDIENCE_PARAM) url.searchParams.set(config.AUTH_OIDC_AUDIENCE_PARAM, config.AUTH_OIDC_AUDIENCE!);
    // Lax, not Strict: the provider's redirect back is a cross-site navigation, which must carry it.
    res.append(
      'Set-Cookie',
      sessions!.cookie(sessions!.loginCookie, Buffer.from(JSON.stringify(login)).toString('base64url'), {
        maxAge: LOGIN_TTL_S,
        sameSite: 'Lax',
      }),
    );
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, url.toString());
  });

  router.get('/auth/callback', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const login = LoginState.safeParse(sessions!.loginState(req));
    res.append('Set-Cookie', sessions!.cookie(sessions!.loginCookie, '', { maxAge: 0, sameSite: 'Lax' }));
    if (typeof req.query.error === 'string') {
      const reason = req.query.error.replace(/[^\w.-]/g, '').slice(0, 60);
      return res.redirect(302, `/#signin-error=${encodeURIComponent(reason)}`);
    }
    const state = typeof req.query.state === 'string' ? Buffer.from(req.query.state) : Buffer.alloc(0);
    if (!login.success || state.length !== Buffer.byteLength(login.data.state) || !timingSafeEqual(state, Buffer.from(login.data.state))) {
      throw new HttpError(400, 'This sign-in was not started here or has expired; start again from the sign-in page');
    }
    if (typeof req.query.code !== 'string') throw new HttpError(400, 'The provider sent no authorization code');
    const metadata = await oidc!.metadata().catch((error: unknown) => {
      throw error instanceof ProviderUnavailable ? new HttpError(503, 'The sign-in provider cannot be reached; try again shortly') : error;
    });
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: req.query.code,
      redirect_uri: redirectUri,
      code_verifier: login.data.verifier,
    });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (config.AUTH_OIDC_CLIENT_SECRET) {
      const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${encode(config.AUTH_OIDC_CLIENT_ID!)}:${encode(config.AUTH_OIDC_CLIENT_SECRET)}`).toString('base64')}`;
    } else {
      form.set('client_id', config.AUTH_OIDC_CLIENT_ID!);
    }
    const answer = await fetch(metadata.token_endpoint!, {
      method: 'POST',
      headers,
      body: form,
      signal: AbortSignal.timeout(10_000),
      redirect: 'error',
    }).catch(() => {
      throw new HttpError(503, 'The sign-in provider cannot be reached; try again shortly');
    });
    const tokens = TokenAnswer.safeParse(await answer.json().catch(() => undefined));
    if (!answer.ok || !tokens.success) {
      log(`web sign-in: the token endpoint answered ${answer.status}`);
      throw new HttpError(502, 'The sign-in provider did not issue tokens; start again from the sign-in page');
    }
    let proof: string;
    try {
      const idSubject = await oidc!.verifyIdToken(tokens.data.id_token, config.AUTH_OIDC_CLIENT_ID!, login.data.nonce);
      // The API trusts access tokens; the session acts as exactly what this one says.
      const identity = await oidc!.verify(tokens.data.access_token);
      if (identity.sub !== idSubject) throw new InvalidToken('the ID token and the access token name different people');
      if (
        await ledger.seen(
          { user: identity.user, iss: identity.iss, sub: identity.sub, roles: identity.roles, client: identity.client },
          { fresh: true },
        )
      ) {
        throw new HttpError(403, 'This account is disabled');
      }
      proof = await sessions!.start(res, {
        user: identity.user,
        name: identity.name,
        roles: identity.roles,
        client: identity.client,
        idToken: tokens.data.id_token,
      });
      await keepIdToken?.(identity.user, tokens.data.id_token);
    } catch (error) {
      if (error instanceof InvalidToken) {
        log(`web sign-in refused: ${error.message}`);
        throw new HttpError(401, `Sign-in refused: ${error.message}`);
      }
      if (error instanceof ProviderUnavailable) throw new HttpError(503, 'The sign-in provider cannot be reached; try again shortly');
      throw error;
    }
    // The fragment reaches the page and no server; the page moves the proof to its storage and off the address bar.
    res.redirect(302, `${login.data.returnTo.split('#')[0]}#session-proof=${proof}`);
  });

  router.post('/auth/logout', async (req, res) => {
    const session = await sessions!.principal(req);
    const idToken = await sessions!.end(req, res, session);
    let endSessionUrl: string | null = null;
    const metadata = await oidc!.metadata().catch(() => undefined);
    if (session?.proven && metadata?.end_session_endpoint) {
      const url = new URL(metadata.end_session_endpoint);
      if (idToken) url.searchParams.set('id_token_hint', idToken);
      url.searchParams.set('client_id', config.AUTH_OIDC_CLIENT_ID!);
      url.searchParams.set('post_logout_redirect_uri', `${base}/`);
      endSessionUrl = url.toString();
    }
    res.setHeader('Cache-Control', 'no-store');
    res.json({ endSessionUrl });
  });

  return router;
}
