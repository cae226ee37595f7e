// The support agent through the web client, clicking as a person would: the dev sign-in link, a
// conversation, an approval whose edited arguments the server refuses (shown at the field) and then
// accepts; a token without the role gets a clear message; sign-out forgets the token.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ALICE, BOB, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, buildWebClient, launchBrowser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';

let app: TestApp;
let browser: Browser;

before(async () => {
  await buildWebClient();
  [app, browser] = await Promise.all([startTestApp(), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

async function customerPhone(userId: string): Promise<string> {
  const client = new pg.Client({ connectionString: app.adminUrl });
  await client.connect();
  try {
    return (await client.query('SELECT phone FROM customers WHERE id = $1', [userId])).rows[0].phone;
  } finally {
    await client.end();
  }
}

describe('support in the web client', () => {
  test('the API serves the app at / and never shadows the API', async () => {
    const page = await fetch(`${app.baseUrl}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root">/);
    const deep = await fetch(`${app.baseUrl}/c/some-conversation`, { headers: { accept: 'text/html' } });
    assert.equal(deep.status, 200, 'the SPA fallback serves client routes');
    const api = await fetch(`${app.baseUrl}/v1/nope`, { headers: { accept: 'text/html' } });
    assert.equal(api.status, 401, '/v1 stays the API');
    const unknown = await app.call('GET', '/v1/no-such-route');
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body.error, 'string');
    assert.equal((await fetch(`${app.baseUrl}/openapi.json`, { headers: { accept: 'text/html' } })).headers.get('content-type')?.includes('json'), true);
  });

  test('an approval: an edit the server refuses is shown at its field, the fixed edit runs', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('brigade.token')), ALICE);

      await startConversation(page, 'support', 'Phone change');
      await sendMessage(page, 'update 1213210 phone 555-123-4567');

      const card = page.getByRole('article', { name: /Approve update_user_contact/ });
      await card.waitFor();
      await card.getByText(/Decide within: /).waitFor();
      await card.getByRole('button', { name: 'Edit arguments…' }).click();
      const phone = card.getByLabel(/^phone/);
      assert.equal(await phone.inputValue(), '555-123-4567');

      await phone.fill('555-12');
      await card.getByRole('button', { name: 'Run with these arguments' }).click();
      const fieldError = card.locator('#' + (await phone.getAttribute('id')) + '-error');
      await fieldError.waitFor();
      assert.match(await fieldError.innerText(), /must be a phone number in format XXX-XXX-XXXX/);
      assert.equal(await phone.getAttribute('aria-invalid'), 'true');
      assert.equal(await phone.inputValue(), '555-12', 'what was typed stays');

      await phone.fill('555-987-6543');
      await card.getByRole('button', { name: 'Run with these arguments' }).click();
      await card.waitFor({ state: 'detached' });
      // the tool's result row, compact and expandable
      const result = page.locator('.msg.tool', { hasText: 'update_user_contact' }).last();
      await result.waitFor();
      await result.locator('summary').click();
      assert.match(await result.locator('pre').innerText(), /555-987-6543/);
      await page.locator('.msg.record', { hasText: 'edit' }).waitFor();
      assert.equal(await customerPhone('1213210'), '555-987-6543');

      // usage and the workflow link are on the page
      await page.getByText(/Estimated cost:/).waitFor();
      assert.match(await page.locator('.usage').innerText(), /tokens/);
    });
  });

  test('a token without the role gets a clear message, then sign-out forgets the token', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await page.goto(`${app.baseUrl}/`);
      if (await page.getByRole('button', { name: 'Sign out' }).isVisible()) await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Bearer token').fill(BOB);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as').waitFor();
      const option = page.getByLabel('Agent').locator('option[value="support"]');
      assert.match(await option.innerText(), /needs the "support" role/);
      await page.getByLabel('Agent').selectOption('support');
      await page.getByRole('button', { name: 'Start' }).click();
      const alert = page.locator('.new-conversation [role="alert"]');
      await alert.waitFor();
      assert.match(await alert.innerText(), /Only users with the "support" role may use the support agent.*Ask an administrator for the role/s);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Bearer token').waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('brigade.token')), null);

      // a refused token is a message, not a blank page
      await page.getByLabel('Bearer token').fill('not-a-valid-token-at-all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(/token was refused/).waitFor();
    });
  });
});
