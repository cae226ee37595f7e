// Issue 34: the web sign-in through the server, over plain HTTP as a browser would drive it (the Chromium test
// walks the same flow through the page). The callback must come back to the sign-in that started it; the
// session cookie is HttpOnly, Secure and SameSite=Strict; a disabled account's session stops at once; sign-out
// ends it everywhere. Issue 42: the cookie alone grants nothing (it reaches every port of the host): every
// request made with it carries the session's proof, handed to the page once in the callback's fragment and by
// no endpoint since; the codec server takes no cookie at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { oidcUserId } from '../../src/api/oidc.ts';
import { PROOF_HEADER } from '../../src/api/web-sign-in.ts';
import { freePort } from '../../stack/ports.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, type TestProvider, startTestProvider } from '../support/oidc-provider.ts';

const UI = 'http://127.0.0.1:8233';
let provider: TestProvider;
let app: TestApp;

before(async () => {
  const port = await freePort();
  provider = await startTestProvider({
    redirectUris: [`http://127.0.0.1:${port}/auth/callback`],
    accounts: { olga: { roles: ['support'], name: 'Olga' }, mallory: { roles: ['support'] }, ana: { roles: ['operator', 'support'] } },
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
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: Buffer.alloc(32, 7).toString('base64') }),
      PAYLOAD_ENCRYPTION_KEY_ID: 'k1',
      TEMPORAL_UI_URL: UI,
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
  const proof = /#session-proof=([A-Za-z0-9_-]{43})$/.exec(callback.headers.get('location') ?? '')?.[1];
  return { callback, session, proof };
}

describe('the web sign-in through the server', () => {
  test('signs in: an HttpOnly, Secure, SameSite=Strict session cookie, back to where the sign-in started, its proof in the fragment', async () => {
    const { callback, session, proof } = await signIn('olga');
    assert.equal(callback.status, 302, await callback.text());
    assert.match(callback.headers.get('location')!, /^\/c\/some-conversation#session-proof=[A-Za-z0-9_-]{43}$/);
    assert.ok(session && proof);
    assert.match(session, /; Path=\/; HttpOnly; Secure; SameSite=Strict; Max-Age=43200$/);
    const cookie = cookiePair(session);
    const proven = { cookie, [PROOF_HEADER]: proof };

    const state = (await (await fetch(`${app.baseUrl}/auth/session`, { headers: proven })).json()) as Record<string, unknown>;
    assert.deepEqual(state, { signIn: 'oidc', signedIn: true, cookieSession: true });

    const meta = await app.call('GET', '/v1/meta', { token: '', headers: proven });
    assert.equal(meta.status, 200);
    assert.equal(meta.body.user, oidcUserId(provider.issuer, 'olga'));
    assert.equal(meta.body.name, 'Olga');
    assert.deepEqual(meta.body.roles, ['support']);

    // another session's proof, or a proof of the wrong shape, is no proof
    const other = await signIn('olga');
    for (const wrong of [other.proof!, 'x'.repeat(43), proof.slice(1), '']) {
      const refused = await app.call('POST', '/v1/api-keys', {
        token: '',
        headers: { cookie, [PROOF_HEADER]: wrong },
        body: { name: 'forged' },
      });
      assert.equal(refused.status, 401, wrong);
      assert.match(refused.headers.get('www-authenticate') ?? '', /invalid_token/);
    }
    const made = await app.call('POST', '/v1/api-keys', { token: '', headers: proven, body: { name: 'mine' } });
    assert.equal(made.status, 201);

    // sign-out: without the proof it only clears this request's cookie; with it the session ends everywhere (a row)
    const unproven = await fetch(`${app.baseUrl}/auth/logout`, { method: 'POST', headers: { cookie } });
    assert.equal(unproven.status, 200);
    assert.deepEqual(await unproven.json(), { endSessionUrl: null });
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers: proven })).status, 200, 'a replayed cookie cannot sign out');
    const out = await fetch(`${app.baseUrl}/auth/logout`, { method: 'POST', headers: proven });
    assert.equal(out.status, 200);
    assert.match(out.headers.getSetCookie().join('\n'), /brigade_session=; .*Max-Age=0/);
    const { endSessionUrl } = (await out.json()) as { endSessionUrl: string };
    const end = new URL(endSessionUrl);
    assert.equal(end.origin, provider.issuer);
    assert.ok(end.searchParams.get('id_token_hint'));
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), `${app.baseUrl}/`);
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers: proven })).status, 401);
    // the key made in the session outlives it
    assert.equal((await app.call('GET', '/v1/meta', { token: made.body.key })).status, 200);
  });

  test('with the cookie alone (as a server on another port of the host receives it) every route answers 401, and none hands out the proof', async () => {
    const { session, proof } = await signIn('ana');
    const cookie = cookiePair(session!);
    const proven = { cookie, [PROOF_HEADER]: proof! };
    const created = await app.call('POST', '/v1/conversations', { token: '', headers: proven, body: { agent: 'support' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;

    const state = await fetch(`${app.baseUrl}/auth/session`, { headers: { cookie } });
    const text = await state.text();
    assert.deepEqual(JSON.parse(text), { signIn: 'oidc', signedIn: false, cookieSession: true });
    assert.ok(!text.includes(proof!), 'GET /auth/session never hands out the proof');

    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/meta'],
      ['GET', '/v1/me/export'],
      ['POST', '/v1/api-keys', { name: 'lasting' }],
      ['GET', '/v1/api-keys'],
      ['GET', '/v1/conversations'],
      ['POST', '/v1/conversations', { agent: 'support' }],
      ['GET', `/v1/conversations/${id}`],
      ['GET', `/v1/conversations/${id}/events`],
      ['GET', `/v1/conversations/${id}/export?format=json`],
      ['POST', `/v1/conversations/${id}/messages`, { text: 'hello' }],
      ['DELETE', '/v1/me'],
    ];
    for (const [method, path, body] of routes) {
      const answer = await app.call(method, path, { token: '', headers: { cookie, accept: 'text/event-stream' }, body });
      assert.equal(answer.status, 401, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    }
    // nothing was made or erased with the cookie alone: the session still works with its proof
    const keys = await app.call('GET', '/v1/api-keys', { token: '', headers: proven });
    assert.equal(keys.status, 200);
    assert.deepEqual(keys.body.keys, []);
    const events = await fetch(`${app.baseUrl}/v1/conversations/${id}/events`, { headers: { ...proven, accept: 'text/event-stream' } });
    assert.equal(events.status, 200);
    await events.body?.cancel();

    // the codec server takes no cookie: not alone, not with the Web UI's Origin, not even with the page's proof
    const decode = (headers: Record<string, string>) =>
      fetch(`${app.baseUrl}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"payloads":[]}',
      });
    for (const headers of [{ cookie }, { cookie, origin: UI }, { ...proven, origin: UI }] as Record<string, string>[]) {
      const answer = await decode(headers);
      assert.equal(answer.status, 401, JSON.stringify(headers));
      assert.equal(answer.headers.get('access-control-allow-credentials'), null);
    }
    // the operator's own access token (what the Web UI passes) is taken, as any bearer token
    const { accessToken } = await provider.signIn('ana');
    const byToken = await decode({ authorization: `Bearer ${accessToken}`, origin: UI });
    assert.equal(byToken.status, 200);
    assert.equal(byToken.headers.get('access-control-allow-origin'), UI);
    assert.equal(byToken.headers.get('access-control-allow-credentials'), null);
  });

  test('a cookie planted from another port (fixation) signs nobody in with the proof of another session', async () => {
    const victim = await signIn('olga');
    const attacker = await signIn('mallory');
    // the victim's page holds its proof; the browser now holds the attacker's cookie
    const planted = { cookie: cookiePair(attacker.session!), [PROOF_HEADER]: victim.proof! };
    const state = (await (await fetch(`${app.baseUrl}/auth/session`, { headers: planted })).json()) as Record<string, unknown>;
    assert.deepEqual(state, { signIn: 'oidc', signedIn: false, cookieSession: true });
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers: planted })).status, 401);
    assert.equal((await app.call('GET', '/v1/conversations', { token: '', headers: planted })).status, 401);
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
    const { session, proof } = await signIn('mallory');
    const headers = { cookie: cookiePair(session!), [PROOF_HEADER]: proof! };
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers })).status, 200);
    await app.adminQuery('UPDATE users SET disabled_at = now() WHERE iss = $1 AND sub = $2', [provider.issuer, 'mallory']);
    assert.equal((await app.call('GET', '/v1/meta', { token: '', headers })).status, 401);
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
