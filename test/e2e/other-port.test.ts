// Issue 42, in real Chromium: cookies are scoped by host, not port, so a server on another port of the API's
// host (here a tiny one the test starts on 127.0.0.1, which also plays the Temporal Web UI: TEMPORAL_UI_URL
// names it) receives the web sign-in's session cookie. Replayed alone from outside the browser, the cookie
// opens nothing: the API's routes and /codec/decode answer 401. And when that server plants its own person's
// session cookie in the victim's browser (fixation), the victim's page does not act as that person: it finds
// a cookie it cannot prove and asks to sign in again, and a link carrying the attacker's proof is ignored.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { PROOF_HEADER } from '../../src/api/web-sign-in.ts';
import { freePort } from '../../stack/ports.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, type TestProvider, startTestProvider } from '../support/oidc-provider.ts';
import { type Browser, buildWebClient, launchBrowser, startConversation, withScreenshot } from './browser.ts';

declare const localStorage: { getItem(key: string): string | null };

let provider: TestProvider;
let app: TestApp;
let browser: Browser;
let other: http.Server;
let otherUrl: string;
/** the Cookie headers the other port's server received */
const received: string[] = [];
/** what the other port's server plants: a Set-Cookie header, or a page that sends the browser to a URL */
let plant: string | undefined;
let sendTo: string | undefined;

before(async () => {
  await buildWebClient();
  const [apiPort, otherPort] = [await freePort(), await freePort()];
  otherUrl = `http://127.0.0.1:${otherPort}`;
  other = http.createServer((req, res) => {
    received.push(req.headers.cookie ?? '');
    if (req.url === '/plant' && plant) res.setHeader('Set-Cookie', plant);
    res.setHeader('content-type', 'text/html');
    const script = req.url === '/send' && sendTo ? `<script>location.href = ${JSON.stringify(sendTo)};</script>` : '';
    res.end(`<!doctype html><title>Another tool</title><h1>Another tool on another port</h1>${script}`);
  });
  await new Promise<void>((resolve) => other.listen(otherPort, '127.0.0.1', resolve));
  provider = await startTestProvider({
    redirectUris: [`http://127.0.0.1:${apiPort}/auth/callback`],
    accounts: { vera: { roles: ['support', 'operator'], name: 'Vera' }, mallory: { roles: ['support'], name: 'Mallory' } },
  });
  [app, browser] = await Promise.all([
    startTestApp({
      apiPort,
      env: {
        AUTH_OIDC_ISSUER: provider.issuer,
        AUTH_OIDC_AUDIENCE: AUDIENCE,
        AUTH_OIDC_CLIENT_ID: CLIENT_ID,
        AUTH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        AUTH_OIDC_AUDIENCE_PARAM: 'resource',
        PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: Buffer.alloc(32, 7).toString('base64') }),
        PAYLOAD_ENCRYPTION_KEY_ID: 'k1',
        // the other port is the Web UI's origin too: the Origin header the codec server once took a cookie from
        TEMPORAL_UI_URL: otherUrl,
      },
    }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await provider?.close();
  other?.closeAllConnections();
  await new Promise((resolve) => other?.close(resolve));
});

/** The attacker's own sign-in, outside any browser: its session cookie and the proof that goes with it. */
async function signInOverHttp(login: string): Promise<{ cookie: string; proof: string }> {
  const start = await fetch(`${app.baseUrl}/auth/login`, { redirect: 'manual' });
  const loginCookie = start.headers
    .getSetCookie()
    .find((c) => c.startsWith('brigade_login='))!
    .split(';')[0]!;
  const back = await provider.authorize(start.headers.get('location')!, login);
  const callback = await fetch(back, { redirect: 'manual', headers: { cookie: loginCookie } });
  assert.equal(callback.status, 302);
  const cookie = callback.headers
    .getSetCookie()
    .find((c) => c.startsWith('brigade_session='))!
    .split(';')[0]!;
  const proof = /#session-proof=([A-Za-z0-9_-]{43})$/.exec(callback.headers.get('location')!)![1]!;
  return { cookie, proof };
}

async function signInInBrowser(login: string): Promise<void> {
  const { page } = browser;
  await page.goto(`${app.baseUrl}/`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByText('Signed in as').waitFor();
}

/** What the API answers the cookie alone, replayed from outside the browser as the other port's server would. */
async function replay(cookie: string): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  const call = async (name: string, path: string, init: RequestInit = {}) => {
    const response = await fetch(`${app.baseUrl}${path}`, { ...init, headers: { cookie, ...(init.headers as object) } });
    statuses[name] = response.status;
    await response.body?.cancel();
  };
  const json = { 'content-type': 'application/json' };
  await call('GET /v1/me/export', '/v1/me/export');
  await call('POST /v1/api-keys', '/v1/api-keys', { method: 'POST', headers: json, body: '{"name":"lasting"}' });
  await call('GET /v1/conversations', '/v1/conversations');
  await call('POST /v1/conversations', '/v1/conversations', { method: 'POST', headers: json, body: '{"agent":"support"}' });
  await call('DELETE /v1/me', '/v1/me', { method: 'DELETE' });
  await call('POST /codec/decode', '/codec/decode', { method: 'POST', headers: { ...json, origin: otherUrl }, body: '{"payloads":[]}' });
  return statuses;
}

test('a page on another port receives the session cookie, which alone opens nothing; a cookie it plants does not sign the victim in as its person', async (t) => {
  const { context, page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInInBrowser('vera');
    await page.getByText('Vera', { exact: true }).first().waitFor();
    // the proof came in the fragment and left the address bar for this origin's storage
    assert.equal(new URL(page.url()).hash, '');
    assert.match((await page.evaluate(() => localStorage.getItem('brigade.session-proof'))) ?? '', /^[A-Za-z0-9_-]{43}$/);
    const id = await startConversation(page, 'support', 'Vera private case');

    // the other port gets the cookie: same host, so the browser sends it
    await page.goto(`${otherUrl}/`);
    await page.getByText('Another tool on another port').waitFor();
    const stolen = /(?:^|;\s*)(brigade_session=[A-Za-z0-9_-]{43})/.exec(received.at(-1)!)?.[1];
    assert.ok(stolen, `the other port received: ${received.at(-1)}`);

    // with it alone, from outside any browser: nothing
    const statuses = await replay(stolen);
    for (const [route, status] of Object.entries(statuses)) assert.ok(status === 401 || status === 403, `${route}: ${status}`);
    const state = await fetch(`${app.baseUrl}/auth/session`, { headers: { cookie: stolen } });
    const stateText = await state.text();
    assert.deepEqual(JSON.parse(stateText), { signIn: 'oidc', signedIn: false, cookieSession: true });
    const events = await fetch(`${app.baseUrl}/v1/conversations/${id}/events`, {
      headers: { cookie: stolen, accept: 'text/event-stream' },
    });
    assert.equal(events.status, 401);
    const [keys] = await app.adminQuery('SELECT count(*)::int AS n FROM api_keys');
    assert.equal(keys.n, 0, 'no key was made with the cookie');

    // the victim's own page still works (nothing above ended the session)
    await page.goto(`${app.baseUrl}/c/${id}`);
    await page.getByRole('heading', { level: 1, name: /Vera private case/ }).waitFor();

    // fixation: the attacker signs in as herself and the other port plants her session cookie in Vera's browser
    const mallory = await signInOverHttp('mallory');
    const bait = await app.call('POST', '/v1/conversations', {
      token: '',
      headers: { cookie: mallory.cookie, [PROOF_HEADER]: mallory.proof },
      body: { agent: 'support', title: 'Mallory bait' },
    });
    assert.equal(bait.status, 201);
    plant = `${mallory.cookie}; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=3600`;
    await page.goto(`${otherUrl}/plant`);
    const held = (await context.cookies(app.baseUrl)).find((c) => c.name === 'brigade_session');
    assert.equal(`brigade_session=${held?.value}`, mallory.cookie, 'the planted cookie replaced the victim’s');

    // Vera's page comes back: her proof does not fit Mallory's session, so it acts as nobody and asks to sign in
    const apiAnswers: number[] = [];
    const onResponse = (response: import('playwright-core').Response) => {
      if (new URL(response.url()).pathname.startsWith('/v1/')) apiAnswers.push(response.status());
    };
    page.on('response', onResponse);
    await page.goto(`${app.baseUrl}/`);
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    await page.getByText('could not be confirmed').waitFor();
    const text = await page.locator('body').innerText();
    assert.ok(!text.includes('Mallory') && !text.includes('Signed in as'), text);
    assert.ok(!text.includes('Mallory bait'), text);
    // and a script on the page with the cookie Mallory planted is refused, whatever proof the page had
    const asWho = await page.evaluate(async () => (await fetch('/v1/meta')).status);
    assert.equal(asWho, 401);

    // the attacker's proof in a link (sent from the other port) is not taken by a tab that started no sign-in
    sendTo = `${app.baseUrl}/#session-proof=${mallory.proof}`;
    await page.goto(`${otherUrl}/send`);
    await page.waitForURL(new RegExp(`^${app.baseUrl}/`));
    await page.getByText('A sign-in this page did not start was ignored').waitFor();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('brigade.session-proof')), null);
    assert.ok(!(await page.locator('body').innerText()).includes('Mallory'));
    page.off('response', onResponse);
    assert.ok(
      apiAnswers.every((status) => status === 401),
      `the page's API calls while Mallory's cookie was planted: ${apiAnswers}`,
    );

    // signing in again (the provider still knows her: no form this time) puts Vera back in her own account
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByText('Signed in as').waitFor();
    await page.getByText('Vera', { exact: true }).first().waitFor();
    const mine = await page.evaluate(async () => {
      const proof = localStorage.getItem('brigade.session-proof')!;
      const response = await fetch('/v1/meta', { headers: { 'x-brigade-session-proof': proof } });
      return ((await response.json()) as { name: string }).name;
    });
    assert.equal(mine, 'Vera');
  });
});
