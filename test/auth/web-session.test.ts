// Issue 34: the web sign-in through the server, over plain HTTP as a browser would drive it (the Chromium test
// walks the same flow through the page). The callback must come back to the sign-in that started it; the
// session cookie is HttpOnly, Secure and SameSite=Strict; a state-changing request with the cookie needs the
// CSRF token; a disabled account's session stops at once; sign-out ends it everywhere.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { oidcUserId } from '../../src/api/oidc.ts';
import { freePort } from '../../stack/ports.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, type TestProvider, startTestProvider } from '../support/oidc-provider.ts';

let provider: TestProvider;
let app: TestApp;

before(async () => {
  const port = await freePort();
  provider = await startTestProvider({
    redirectUris: [`http://127.0.0.1:${port}/auth/callback`],
    accounts: { olga: { roles: ['support'], name: 'Olga' }, mallory: { roles: ['support'] } },
  });
  app = await startTestApp({
    worker: false,
    apiPort: port,
    env: {
      AUTH_OIDC_ISSUER: provider.issuer,
      AUTH_OIDC_AUDIENCE: AUDIENCE,
      AUTH_OIDC_CLIENT_ID: CLIENT_ID,
      AUTH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      AUTH_OIDC_AUDIENCE_PARAM: 'resource',
    },
  });
});
after(async () => {
  await app?.stop();
  await provider?.close();
});

const cookiePair = (setCookie: string) => setCookie.split(';')[0]!;

/** /auth/login, the provider's form, /auth/callback: answers the session cookie and the callback's answer. */
async function signIn(login: string, options: { tamperState?: boolean } = {}) {
  const start = await fetch(`${app.baseUrl}/auth/login?returnTo=${encodeURIComponent('/c/some-conversation')}`, { redirect: 'manual' });
  assert.equal(start.status, 302);
  const loginCookie = start.headers.getSetCookie().find((c) => c.startsWith('brigade_login='));
  assert.ok(loginCookie);
  assert.match(loginCookie, /HttpOnly; Secure; SameSite=Lax/);
  const authorize = new URL(start.headers.get('location')!);
  assert.equal(authorize.origin, provider.issuer);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorize.searchParams.get('resource'), AUDIENCE);
  const back = new URL(await provider.authorize(authorize.toString(), login));
  if (options.tamperState) back.searchParams.set('state', 'not-the-state');
  const callback = await fetch(back, { redirect: 'manual', headers: { cookie: cookiePair(loginCookie) } });
  const session = callback.headers.getSetCookie().find((c) => c.startsWith('brigade_session='));
  return { callback, session };
}

describe('the web sign-in through the server', () => {
  test('signs in: an HttpOnly, Secure, SameSite=Strict session cookie, back to where the sign-in started', async () => {
    const { callback, session } = await signIn('olga');
    assert.equal(callback.status, 302, await callback.text());
    assert.equal(callback.headers.get('location'), '/c/some-conversation');
    assert.ok(session);
    assert.match(session, /; Path=\/; HttpOnly; Secure; SameSite=Strict; Max-Age=43200$/);
    const cookie = cookiePair(session);

    const state = (await (await fetch(`${app.baseUrl}/auth/session`, { headers: { cookie } })).json()) as {
      signIn: string;
      signedIn: boolean;
      csrfToken: string;
    };
    assert.equal(state.signIn, 'oidc');
    assert.equal(state.signedIn, true);
    assert.match(state.csrfToken, /^[A-Za-z0-9_-]{43}$/);

    const meta = await app.call('GET', '/v1/meta', { token: '', headers: { cookie } });
    assert.equal(meta.status, 200);
    assert.equal(meta.body.user, oidcUserId(provider.issuer, 'olga'));
    assert.equal(meta.body.name, 'Olga');
    assert.deepEqual(meta.body.roles, ['support']);

    // state-changing with the cookie: the CSRF token or 403
    const forged = await app.call('POST', '/v1/api-keys', { token: '', headers: { cookie }, body: { name: 'forged' } });
    assert.equal(forged.status, 403);
    assert.match(forged.body.error, /x-csrf-token/);
    const wrong = await app.call('POST', '/v1/api-keys', {
      token: '',
      headers: { cookie, 'x-csrf-token': 'x'.repeat(43) },
      body: { name: 'forged' },
    });
    assert.equal(wrong.status, 403);
    const made = await app.call('POST', '/v1/api-keys', {
      token: '',
      headers: { cookie, 'x-csrf-token': state.csrfToken },
      body: { name: 'mine' },
    });
    assert.equal(made.status, 201);

    // sign-out: the session ends (everywhere: it is a row), the provider's sign-out is offered
    const noCsrf = await fetch(`${app.baseUrl}/auth/logout`, { method: 'POST', headers: { cookie } });
    assert.equal(noCsrf.status, 403);
    const out = await fetch(`${app.baseUrl}/auth/logout`, { method: 'POST', headers: { cookie, 'x-csrf-token': state.csrfToken } });
    assert.equal(out.status, 200);
    const { endSessionUrl } = (await out.json()) as { endSessionUrl: string };
    const end = new URL(endSessionUrl);
    assert.equal(end.origin, provider.issuer);
    assert.ok(end.searchParams.get('id_token_hint'));
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), `${app.baseUrl}/`);
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers: { cookie } })).status, 401);
    // the key made in the session outlives it
    assert.equal((await app.call('GET', '/v1/meta', { token: made.body.key })).status, 200);
  });

  test('a callback that is not the sign-in this browser started is refused', async () => {
    const { callback, session } = await signIn('olga', { tamperState: true });
    assert.equal(callback.status, 400);
    assert.equal(session, undefined);
    const noCookie = await fetch(`${app.baseUrl}/auth/callback?code=abc&state=def`, { redirect: 'manual' });
    assert.equal(noCookie.status, 400);
  });

  test('returnTo cannot send the browser to another site', async () => {
    for (const returnTo of ['//evil.example/', '/\\evil.example/', 'https://evil.example/']) {
      const start = await fetch(`${app.baseUrl}/auth/login?returnTo=${encodeURIComponent(returnTo)}`, { redirect: 'manual' });
      const login = start.headers.getSetCookie().find((c) => c.startsWith('brigade_login='))!;
      const state = JSON.parse(Buffer.from(cookiePair(login).split('=')[1]!, 'base64url').toString());
      assert.equal(state.returnTo, '/');
    }
  });

  test('a disabled account: its session stops at once, and it cannot sign in', async () => {
    const { session } = await signIn('mallory');
    const cookie = cookiePair(session!);
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers: { cookie } })).status, 200);
    await app.adminQuery('UPDATE users SET disabled_at = now() WHERE iss = $1 AND sub = $2', [provider.issuer, 'mallory']);
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers: { cookie } })).status, 401);
    const again = await signIn('mallory');
    assert.equal(again.callback.status, 403);
    assert.equal(again.session, undefined);
  });

  test('an account disabled before its first request: its access token is refused', async () => {
    await app.adminQuery("INSERT INTO users (user_id, iss, sub, disabled_at) VALUES ($1, $2, 'nadia', now())", [
      oidcUserId(provider.issuer, 'nadia'),
      provider.issuer,
    ]);
    const { accessToken } = await provider.signIn('nadia');
    const refused = await app.call('GET', '/v1/meta', { token: accessToken });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /account is disabled/);
  });
});
