// Issue 34, in real Chromium against a real OpenID provider (oidc-provider on loopback): the web client signs
// in through the server (Authorization Code with PKCE), the session is a cookie page scripts cannot read, the
// conversation and its event stream work with it and the session's proof (issue 42: the proof arrives in the
// callback's fragment and lives in this origin's local storage), a request with the cookie alone is refused,
// the API keys page makes a key that works from a script and revokes it, and sign-out ends the session here
// and at the provider.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { freePort } from '../../stack/ports.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, type TestProvider, startTestProvider } from '../support/oidc-provider.ts';
import { type Browser, buildWebClient, consoleErrorsDuring, launchBrowser, startConversation, withScreenshot } from './browser.ts';

// The page's globals, as the functions that run in Chromium see them (this project's types are Node's).
declare const document: { cookie: string };
declare const sessionStorage: { length: number };
declare const localStorage: { getItem(key: string): string | null };

let provider: TestProvider;
let app: TestApp;
let browser: Browser;

before(async () => {
  await buildWebClient();
  const port = await freePort();
  provider = await startTestProvider({
    redirectUris: [`http://127.0.0.1:${port}/auth/callback`],
    accounts: { olga: { roles: ['support'], name: 'Olga' } },
  });
  [app, browser] = await Promise.all([
    startTestApp({
      apiPort: port,
      env: {
        AUTH_OIDC_ISSUER: provider.issuer,
        AUTH_OIDC_AUDIENCE: AUDIENCE,
        AUTH_OIDC_CLIENT_ID: CLIENT_ID,
        AUTH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        AUTH_OIDC_AUDIENCE_PARAM: 'resource',
      },
    }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await provider?.close();
});

test('sign in through the provider, work with the cookie session, make and revoke an API key, sign out', async (t) => {
  const { page } = browser;
  consoleErrorsDuring(t, page);
  await withScreenshot(t, import.meta.filename, page, async () => {
    await page.goto(`${app.baseUrl}/`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    // the provider's own login form
    await page.waitForURL(new RegExp(`^${provider.issuer}/interaction/`));
    await page.locator('input[name=login]').fill('olga');
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();

    await page.getByText('Signed in as').waitFor();
    await page.getByText('Olga', { exact: true }).first().waitFor();
    assert.equal(new URL(page.url()).origin, app.baseUrl);
    // the proof left the address bar (and so the history) for this origin's local storage
    assert.equal(new URL(page.url()).hash, '');
    assert.match((await page.evaluate(() => localStorage.getItem('brigade.session-proof'))) ?? '', /^[A-Za-z0-9_-]{43}$/);

    // no token reaches page scripts: the session cookie is HttpOnly and nothing is in session storage (the proof,
    // which is worth nothing without the cookie, is in local storage)
    const cookies = await browser.context.cookies(app.baseUrl);
    const session = cookies.find((c) => c.name.endsWith('brigade_session'));
    assert.ok(session, JSON.stringify(cookies.map((c) => c.name)));
    assert.equal(session.httpOnly, true);
    assert.equal(session.secure, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie.includes('brigade_session')), false);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);

    // a conversation (POST with the proof) and its event stream (GET with the proof)
    const stream = page.waitForResponse((response) => /\/v1\/conversations\/[^/]+\/events/.test(response.url()));
    const id = await startConversation(page, 'support', 'Signed in by provider');
    assert.equal((await stream).status(), 200);
    const [row] = await app.adminQuery('SELECT user_id FROM conversations WHERE id = $1', [id]);
    assert.match(row.user_id, /^oidc:/);

    // the same requests without the proof are refused, though the browser sends the cookie: GET too
    const forged = await page.evaluate(async () => {
      const response = await fetch('/v1/conversations', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"agent":"support"}',
      });
      return [response.status, (await fetch('/v1/conversations')).status];
    });
    assert.deepEqual(forged, [401, 401]);

    // API keys: made on the page, shown once, used by a script, revoked
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('laptop script');
    // a scope besides the conversations, chosen on the page (issue 42)
    await page.getByLabel('Export all your data').check();
    assert.equal(await page.getByLabel('Operator routes').count(), 0, 'the operator scope is offered to operators only');
    await page.getByRole('button', { name: 'Make a key' }).click();
    const key = await page.getByLabel('New API key').inputValue();
    assert.match(key, /^brg_/);
    const byScript = await fetch(`${app.baseUrl}/v1/conversations`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(byScript.status, 200);
    assert.deepEqual(
      ((await byScript.json()) as { conversations: { id: string }[] }).conversations.map((c) => c.id),
      [id],
    );
    const script = (method: string, path: string) =>
      fetch(`${app.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
    assert.equal((await script('GET', '/v1/me/export')).status, 200, 'the scope ticked');
    assert.equal((await script('DELETE', '/v1/me')).status, 403, 'a scope not ticked');
    await page.getByRole('cell', { name: 'laptop script', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'conversations, export', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Revoke laptop script' }).click();
    await page.getByRole('dialog', { name: 'Revoke “laptop script”?' }).getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText('You have no API keys.').waitFor();
    assert.equal((await fetch(`${app.baseUrl}/v1/conversations`, { headers: { authorization: `Bearer ${key}` } })).status, 401);

    // sign-out ends the session here, then at the provider, which sends the browser back
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(new RegExp(`^${provider.issuer}/`));
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    const ended = (await page.evaluate(async () => (await fetch('/auth/session')).json())) as { signedIn: boolean; cookieSession: boolean };
    assert.equal(ended.signedIn, false);
    assert.equal(ended.cookieSession, false);
    assert.equal(await page.evaluate(() => localStorage.getItem('brigade.session-proof')), null);
    const sessionRows = await app.adminQuery('SELECT count(*)::int AS n FROM web_sessions');
    assert.equal(sessionRows[0].n, 0);
  });
});
