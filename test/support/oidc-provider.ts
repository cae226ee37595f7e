// A real OpenID provider for the sign-in tests: the `oidc-provider` package (a certified implementation) on
// loopback, with one confidential web client for Brigade, JWT access tokens for Brigade's API (RFC 8707
// resource indicators, RFC 9068 at+jwt) that carry roles and a bar from the account, and its dev login form
// (any login, any password). The tests hold its signing keys, so they can also sign the tokens a hostile
// client would bring, and rotate them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

export const AUDIENCE = 'https://api.brigade.test';
export const CLIENT_ID = 'brigade-web';
export const CLIENT_SECRET = 'brigade-web-secret-0123456789abcdef';

export interface TestAccount {
  roles?: string[];
  bar?: string;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  /** the signing keys the provider publishes now (private parts included), newest first */
  keys: JWK[];
  accounts: Map<string, TestAccount>;
  /** JWKS requests served so far */
  jwksRequests: number;
  /** stops answering (connections refused) until started again */
  down(): Promise<void>;
  up(): Promise<void>;
  /** publishes a new key (signing with it from now on) in front of the old one, or instead of it */
  rotate(options?: { dropOld?: boolean }): Promise<JWK>;
  /** follows an authorization request through the dev login form; answers the redirect back to the client (code and state in it) */
  authorize(authorizeUrl: string, login: string): Promise<string>;
  /** the Authorization Code flow driven over HTTP with the dev login form; answers the token endpoint's tokens */
  signIn(login: string): Promise<{ accessToken: string; idToken: string }>;
  close(): Promise<void>;
}

export async function newSigningKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

export async function startTestProvider(
  options: { redirectUris?: string[]; accounts?: Record<string, TestAccount> } = {},
): Promise<TestProvider> {
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  let keys: JWK[] = [await newSigningKey('key-1')];
  let port = 0;
  let provider: any;
  let server: http.Server | undefined;
  let jwksRequests = 0;
  const redirectUris = options.redirectUris ?? ['http://127.0.0.1:1/auth/callback'];

  // The server is bound first so the issuer (which has the port in it) is known when the provider is made.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const issuer = `http://127.0.0.1:${port}`;

  function makeProvider(): any {
    const made = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: redirectUris,
          post_logout_redirect_uris: redirectUris.map((uri) => new URL('/', uri).toString()),
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: keys.map((key) => ({ ...key })) as never },
      pkce: { required: () => true },
      cookies: { keys: ['test-cookie-key-0123456789'] },
      features: {
        devInteractions: { enabled: true },
        rpInitiatedLogout: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => AUDIENCE,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            if (resource !== AUDIENCE) throw new Error(`unknown resource ${resource}`);
            return { scope: 'api', audience: AUDIENCE, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
          },
        },
      },
      // consent is given already: the dev login form is the one page a person sees
      loadExistingGrant: async (ctx: any) => {
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
        grant.addOIDCScope('openid profile email');
        grant.addResourceScope(AUDIENCE, 'api');
        await grant.save();
        return grant;
      },
      findAccount: (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: () => ({ sub, preferred_username: accounts.get(sub)?.name ?? sub }),
      }),
      extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) => {
        const account = accounts.get((token as { accountId?: string }).accountId ?? '');
        return {
          roles: account?.roles ?? [],
          ...(account?.bar ? { bar: account.bar } : {}),
          preferred_username: account?.name ?? (token as { accountId?: string }).accountId,
        };
      },
      claims: { openid: ['sub'], profile: ['preferred_username'] },
      ttl: { AccessToken: 600, IdToken: 600, Interaction: 600, Grant: 600, Session: 600 },
    });
    made.on('server_error', (_ctx: unknown, error: unknown) => console.error('oidc-provider:', error));
    return made;
  }

  async function up(): Promise<void> {
    provider = makeProvider();
    const callback = provider.callback();
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/jwks')) jwksRequests++;
      callback(req, res);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
  }
  async function down(): Promise<void> {
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  }
  await up();

  const testProvider: TestProvider = {
    issuer,
    get keys() {
      return keys;
    },
    accounts,
    get jwksRequests() {
      return jwksRequests;
    },
    down,
    up,
    async rotate({ dropOld = false } = {}) {
      const key = await newSigningKey(`key-${keys.length + 1}-${Date.now()}`);
      keys = dropOld ? [key] : [key, ...keys];
      await down();
      await up();
      return key;
    },
    async authorize(authorizeUrl, login) {
      const jar = new Map<string, string>();
      const remember = (response: Response) => {
        for (const cookie of response.headers.getSetCookie()) {
          const [pair] = cookie.split(';');
          const at = pair!.indexOf('=');
          jar.set(pair!.slice(0, at), pair!.slice(at + 1));
        }
      };
      const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
      let url = authorizeUrl;
      let response = await fetch(url, { redirect: 'manual' });
      remember(response);
      for (let hop = 0; hop < 10; hop++) {
        const location = response.headers.get('location');
        if (!location) throw new Error(`the provider stopped at ${response.status}: ${(await response.text()).slice(0, 300)}`);
        url = new URL(location, url).toString();
        if (!url.startsWith(issuer)) return url;
        if (/\/interaction\/[^/]+$/.test(new URL(url).pathname)) {
          response = await fetch(url, {
            method: 'POST',
            redirect: 'manual',
            headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ prompt: 'login', login, password: 'any' }),
          });
        } else {
          response = await fetch(url, { redirect: 'manual', headers: { cookie: cookieHeader() } });
        }
        remember(response);
      }
      throw new Error(`too many redirects, last ${url}`);
    },
    async signIn(login) {
      const verifier = 'v'.repeat(10) + Math.random().toString(36).slice(2).padEnd(40, 'x');
      const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString('base64url');
      const authorize = new URL(`${issuer}/auth`);
      for (const [name, value] of Object.entries({
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: redirectUris[0]!,
        scope: 'openid profile',
        nonce: 'nonce-1234567890',
        state: 'state-1234567890',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: AUDIENCE,
      }))
        authorize.searchParams.set(name, value);
      const url = await testProvider.authorize(authorize.toString(), login);
      const code = new URL(url).searchParams.get('code');
      if (!code) throw new Error(`no code in ${url}`);
      const token = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUris[0]!,
          code_verifier: verifier,
          resource: AUDIENCE,
        }),
      });
      const body = (await token.json()) as { access_token?: string; id_token?: string };
      if (!body.access_token || !body.id_token) throw new Error(`the token endpoint answered ${token.status}: ${JSON.stringify(body)}`);
      return { accessToken: body.access_token, idToken: body.id_token };
    },
    close: down,
  };
  return testProvider;
}
