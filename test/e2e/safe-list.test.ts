// Safe by default and the list (issue 46, items 4 and 7), clicking as a person would: Enter in the delete dialog
// keeps, Undo after Delete keeps, revoking a key asks, a new key copies; the list follows last activity, finds a
// conversation by a word of a message, its items open in a new tab with Ctrl, the focus lands where the person
// goes on after Start and Rename, and a phone's header is one row.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, launchBrowser, openHome, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts));

const open = async (title: string) => {
  const created = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'recipes', title } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
};
const say = async (id: string, text: string) =>
  assert.equal((await app.call('POST', `/v1/conversations/${id}/messages`, { token: ALICE, body: { text } })).status, 200);
const sidebarTitles = (page: Browser['page']) => page.locator('#sidebar .conversations a .title').allInnerTexts();
const options = async (page: Browser['page']) => {
  await page.locator('details.menu > summary').click();
  return page.locator('details.menu[open]');
};

describe('safe by default', () => {
  test('Enter in the delete dialog keeps the conversation; Undo after Delete keeps it too', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      const id = await startConversation(page, 'recipes', 'Keep me safe');
      await (await options(page)).getByRole('button', { name: 'Delete…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete “Keep me safe”?' });
      await dialog.waitFor();
      assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Keep it', 'the focus is on Keep');
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      assert.equal((await app.call('GET', `/v1/conversations/${id}`)).status, 200, 'Enter kept it');

      await (await options(page)).getByRole('button', { name: 'Delete…' }).click();
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('“Keep me safe” will be deleted in 5 seconds.').waitFor();
      await page.getByRole('button', { name: 'Undo' }).click();
      await page.getByText('Kept “Keep me safe”: nothing was deleted.').waitFor();
      await page.getByRole('heading', { level: 1, name: /Keep me safe/ }).waitFor();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      assert.equal((await app.call('GET', `/v1/conversations/${id}`)).status, 200, 'Undo kept it');
      assert.ok((await sidebarTitles(page)).includes('Keep me safe'));
    });
  });

  test('revoking an API key asks first (Enter keeps it); a new key has Copy', async (t) => {
    const { page, context } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
      await signInByLink(page, app.baseUrl, ALICE);
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByLabel('Key name').fill('copy me');
      await page.getByRole('button', { name: 'Make a key' }).click();
      const key = await page.getByLabel('New API key').inputValue();
      assert.match(key, /^brg_/);
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await page.getByRole('status').getByText('Copied', { exact: true }).waitFor();
      assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), key);

      await page.getByRole('button', { name: 'Revoke copy me' }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke “copy me”?' });
      await dialog.waitFor();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      const withKey = (await fetch(`${app.baseUrl}/v1/conversations`, { headers: { authorization: `Bearer ${key}` } })).status;
      assert.equal(withKey, 200, 'Enter kept the key');
      await page.getByRole('button', { name: 'Revoke copy me' }).click();
      await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
      await page.getByText('You have no API keys.').waitFor();
      assert.equal((await fetch(`${app.baseUrl}/v1/conversations`, { headers: { authorization: `Bearer ${key}` } })).status, 401);
    });
  });

  test('at 375 px the keys table scrolls in its own box: the page never scrolls sideways', async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width: 375, height: 740 });
    t.after(() => page.setViewportSize({ width: 1280, height: 860 }));
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page.goto(`${app.baseUrl}/api-keys`);
      await page.getByLabel('Key name').fill('a phone key');
      await page.getByRole('button', { name: 'Make a key' }).click();
      await page.getByRole('table', { name: 'Your API keys' }).getByRole('button', { name: 'Revoke a phone key' }).waitFor();
      // the page's scrolling box is main, not the document
      const [scrollWidth, clientWidth] = await page.evaluate(() => {
        const main = (globalThis as any).document.querySelector('main');
        return [main.scrollWidth, main.clientWidth];
      });
      assert.ok(scrollWidth <= clientWidth, `the page scrolls sideways: ${scrollWidth} px in ${clientWidth}`);
    });
  });
});

describe('the list', () => {
  test('is ordered by last activity, and search finds a conversation by a word of a message', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      const first = await open('Started first');
      await open('Started second');
      await say(first, 'what goes with quince paste?');
      await signInByLink(page, app.baseUrl, ALICE);
      await page.locator('#sidebar .conversations a').first().waitFor();
      const titles = await sidebarTitles(page);
      assert.ok(
        titles.indexOf('Started first') < titles.indexOf('Started second'),
        `the one written to last comes first: ${titles.join(', ')}`,
      );

      const search = page.getByLabel('Search conversations');
      await search.fill('QUINCE');
      await page.waitForFunction(() => {
        const shown = [...(globalThis as any).document.querySelectorAll('#sidebar .conversations a .title')].map((e) => e.textContent);
        return shown.length === 1 && shown[0] === 'Started first';
      });
      await search.fill('no such word anywhere');
      await page.getByText('No conversation has “no such word anywhere” in its title or your messages.').waitFor();
      await search.fill('');
    });
  });

  test('an item is a real link: Ctrl-click opens it in a new tab and leaves this one', async (t) => {
    const { page, context } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      const id = await open('Open me in a tab');
      await signInByLink(page, app.baseUrl, ALICE);
      const link = page.locator('#sidebar .conversations a', { hasText: 'Open me in a tab' });
      assert.equal(await link.getAttribute('href'), `/c/${id}`);
      const here = page.url();
      const [tab] = await Promise.all([context.waitForEvent('page'), link.click({ modifiers: ['Control'] })]);
      await tab.waitForURL(new RegExp(`/c/${id}$`));
      assert.equal(page.url(), here, 'this tab stays where it was');
      await tab.close();
    });
  });

  test('the focus goes to the composer after Start and to the title after Rename', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'recipes', 'Focus after start');
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'composer-text');
      await (await options(page)).getByRole('button', { name: 'Rename' }).click();
      await page.getByLabel('Title', { exact: true }).fill('Focus after rename');
      await page.getByLabel('Title', { exact: true }).press('Enter');
      await page.getByRole('heading', { level: 1, name: /Focus after rename/ }).waitFor();
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'conversation-title');
      await openHome(page);
    });
  });

  test("a 375 px phone's header is one row", async (t) => {
    const phone = await launchBrowser({ width: 375, height: 740 });
    t.after(() => phone.close());
    await withScreenshot(t, import.meta.filename, phone.page, async () => {
      await signInByLink(phone.page, app.baseUrl, ALICE);
      const rows = await phone.page.evaluate(() => {
        const bar = (globalThis as any).document.querySelector('.topbar')!;
        const tops = [...bar.children]
          .filter((c) => (c as any).offsetParent !== null)
          .map((c) => Math.round(c.getBoundingClientRect().top));
        return { height: bar.getBoundingClientRect().height, tops, scrollWidth: (globalThis as any).document.documentElement.scrollWidth };
      });
      assert.ok(rows.height <= 56, `one row: ${JSON.stringify(rows)}`);
      assert.ok(rows.scrollWidth <= 375, `no sideways scroll: ${JSON.stringify(rows)}`);
    });
  });
});
