// The app shell and the conversations people manage (issue 36), in Chromium at 1280 and 375 px: the page
// never scrolls (only the transcript does) and the composer stays in view in a long conversation; the
// agents' tiles start conversations; titles are made, renamed, exported and deleted; a conversation deleted
// elsewhere says so; the list is searched and grouped by day; no developer words in what people read; the
// connection banner comes and goes; dark mode follows the system.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ALICE, GUS_GREAT_LAKES, type TestApp } from '../support/test-app.ts';
import {
  type Browser,
  fullyInViewAboveComposer,
  openHome,
  pageDoesNotScroll,
  sendMessage,
  signInByLink,
  withScreenshot,
} from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts));

const WIDTHS = [1280, 375] as const;
const HEIGHT = { 1280: 860, 375: 740 } as const;

/** Words for developers that people must not read: tool names, workflow words, codes, raw errors, markers. */
const DEVELOPER_WORDS =
  /\b[a-z]+_[a-z_]+\b|\bworkflow\b|\bTemporal\b|\bCACHE_[A-Z]+\b|\[offline model\]|\bIdle\b|\bHTTP\b|\bstatus \d{3}\b|\b(?:400|401|403|404|409|422|500|503)\b|\bError:|\bundefined\b|\bnull\b|\{"|GEMINI_API_KEY|\bCalling\b/;

async function visibleText(page: Page): Promise<string> {
  return page.locator('#root').innerText();
}

async function assertNoDeveloperWords(page: Page, where: string): Promise<void> {
  const text = await visibleText(page);
  const found = DEVELOPER_WORDS.exec(text);
  assert.equal(
    found,
    null,
    `${where}: "${found?.[0]}" in what people read:\n${text.slice(Math.max(0, (found?.index ?? 0) - 200), (found?.index ?? 0) + 200)}`,
  );
}

async function assertShell(page: Page, where: string): Promise<void> {
  const still = await pageDoesNotScroll(page);
  assert.ok(still.ok, `${where}: the page itself does not scroll: ${still.detail}`);
  const header = await page.locator('header.topbar').boundingBox();
  assert.ok(header && header.y >= 0 && header.y < 2, `${where}: the header is at the top: ${JSON.stringify(header)}`);
}

async function waitReady(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');
}

/** The conversation's Options menu, open. */
async function options(page: Page) {
  const menu = page.locator('.conversation-head details.menu');
  if (!(await menu.evaluate((el) => (el as any).open))) await menu.locator('summary').first().click();
  return menu;
}

async function openDrawerIfNarrow(page: Page): Promise<void> {
  const button = page.getByRole('button', { name: 'Conversations' });
  if (await button.isVisible()) {
    if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
    await page.locator('#sidebar').waitFor({ state: 'visible' });
  }
}

for (const width of WIDTHS) {
  describe(`the app shell at ${width} px`, () => {
    test('the home page offers the four agents; a tile starts a conversation with its first prompt, and a title appears', async (t) => {
      const { page } = browser;
      await page.setViewportSize({ width, height: HEIGHT[width] });
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ALICE);
        const tiles = page.locator('ul.tiles').getByRole('article');
        await tiles.first().waitFor();
        assert.deepEqual((await tiles.getByRole('heading').allInnerTexts()).sort(), ['Beer', 'Recipes', 'Sous chef', 'Support']);
        const support = page.getByRole('article', { name: 'Support' });
        assert.match(await support.innerText(), /Looks up customers and orders/);
        if (width === 375) assert.equal(await page.locator('#sidebar').isVisible(), false, 'on a phone the list is a drawer, closed');
        await assertShell(page, 'home');
        await assertNoDeveloperWords(page, 'home');

        await support.getByRole('button', { name: 'Ask “status of order 24601”' }).click();
        await page.waitForURL(/\/c\//);
        await page.locator('.msg.user', { hasText: 'status of order 24601' }).waitFor();
        await page.locator('.msg.tool', { hasText: 'Order 24601' }).waitFor();
        // the title from the first exchange replaces "support conversation", in the heading and in the list
        await page.getByRole('heading', { level: 1, name: /Status of order 24601/ }).waitFor({ timeout: 20_000 });
        await openDrawerIfNarrow(page);
        await page.locator('#sidebar .conversations a', { hasText: 'Status of order 24601' }).first().waitFor();
        assert.match(await page.locator('#sidebar').innerText(), /Today/, 'the list is grouped by day');
        if (width === 375) {
          await page.locator('#sidebar .conversations a', { hasText: 'Status of order 24601' }).first().click();
          await page.locator('#sidebar').waitFor({ state: 'hidden' });
        }
        await assertShell(page, 'conversation');
        // the offline model is one badge for the conversation, not a prefix on each reply
        assert.equal(await page.locator('.offline-badge').count(), 1);
        await assertNoDeveloperWords(page, 'support conversation');
      });
    });

    test('a long conversation: only the transcript scrolls, the header and composer stay in view', async (t) => {
      const { page } = browser;
      await page.setViewportSize({ width, height: HEIGHT[width] });
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ALICE);
        await page
          .getByRole('article', { name: 'Support' })
          .getByRole('button', { name: /^Start/ })
          .click();
        await page.waitForURL(/\/c\//);
        for (let i = 0; i < 7; i += 1) {
          await sendMessage(page, i % 2 ? 'orders for 1213210' : 'look up john@gmail.com');
          await page.locator('.msg.tool').nth(i).waitFor();
          await waitReady(page);
        }
        await assertShell(page, 'long conversation');
        const scroller = await page
          .locator('.scroller')
          .evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight, top: el.scrollTop }));
        assert.ok(scroller.scroll > scroller.client * 1.5, `the transcript is longer than its view: ${JSON.stringify(scroller)}`);
        assert.ok(scroller.top > 0, 'it opens at its end, scrolled');
        const composer = await page.locator('form.composer').boundingBox();
        const viewport = page.viewportSize()!;
        assert.ok(
          composer && composer.y > 0 && composer.y + composer.height <= viewport.height + 1,
          `the composer is in view: ${JSON.stringify(composer)} in ${viewport.height}`,
        );
        const newest = await fullyInViewAboveComposer(page.locator('ol.transcript > li').last());
        assert.ok(newest.ok, `the newest reply is in view above the composer: ${newest.detail}`);
        // scrolling the transcript to its top moves neither the header nor the composer
        await page.locator('.scroller').evaluate((el) => el.scrollTo(0, 0));
        await assertShell(page, 'scrolled up');
        assert.deepEqual(await page.locator('form.composer').boundingBox(), composer);
        // the wheel over the transcript scrolls the transcript, not the page
        await page.locator('.scroller').hover();
        await page.mouse.wheel(0, 400);
        await page.waitForFunction(() => (globalThis as any).document.querySelector('.scroller').scrollTop > 0);
        assert.equal(await page.evaluate(() => (globalThis as any).scrollY), 0);
      });
    });
  });
}

describe('conversations people manage', () => {
  test('rename, export as Markdown and JSON, delete after a confirmation; search the list by title', async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 860 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page.getByRole('article', { name: 'Support' }).getByRole('button', { name: 'Ask “status of order 24601”' }).click();
      await page.getByRole('heading', { level: 1, name: /Status of order 24601/ }).waitFor({ timeout: 20_000 });
      const id = /\/c\/([^/]+)/.exec(page.url())![1]!;

      // rename: Options → Rename, type, Enter
      await (await options(page)).getByRole('button', { name: 'Rename' }).click();
      const field = page.getByLabel('Title', { exact: true });
      assert.equal(await field.inputValue(), 'Status of order 24601');
      await field.fill('Headphones for John');
      await field.press('Enter');
      await page.getByRole('heading', { level: 1, name: /Headphones for John/ }).waitFor();
      await page.locator('#sidebar .conversations a', { hasText: 'Headphones for John' }).waitFor();
      assert.equal((await app.call('GET', `/v1/conversations/${id}`)).body.title, 'Headphones for John');
      await page.reload();
      await page.getByRole('heading', { level: 1, name: /Headphones for John/ }).waitFor();
      // Escape keeps the old title
      await (await options(page)).getByRole('button', { name: 'Rename' }).click();
      await page.getByLabel('Title', { exact: true }).fill('Not this');
      await page.getByLabel('Title', { exact: true }).press('Escape');
      await page.getByRole('heading', { level: 1, name: /Headphones for John/ }).waitFor();

      // export as Markdown and as JSON: downloads named after the title, with the conversation in them
      const [markdown] = await Promise.all([
        page.waitForEvent('download'),
        (await options(page)).getByRole('button', { name: 'Export as Markdown' }).click(),
      ]);
      assert.equal(markdown.suggestedFilename(), 'headphones-for-john.md');
      const md = fs.readFileSync((await markdown.path())!, 'utf8');
      assert.match(md, /^# Headphones for John/);
      assert.match(md, /status of order 24601/);
      const [json] = await Promise.all([
        page.waitForEvent('download'),
        (await options(page)).getByRole('button', { name: 'Export as JSON' }).click(),
      ]);
      assert.equal(json.suggestedFilename(), 'headphones-for-john.json');
      const exported = JSON.parse(fs.readFileSync((await json.path())!, 'utf8'));
      assert.equal(exported.conversation.id, id);
      assert.ok(exported.messages.some((m: { text?: string }) => m.text === 'status of order 24601'));

      // search by title (the server searches: the list shows what it found)
      const search = page.getByLabel('Search conversations');
      await search.fill('headphones');
      await page.waitForFunction(() => {
        const shown = [...(globalThis as any).document.querySelectorAll('#sidebar .conversations a .title')].map((e: any) => e.textContent);
        return shown.length === 1 && shown[0] === 'Headphones for John';
      });
      // by a word of the person's message: the words around it show under the title, the search marked
      await search.fill('24601');
      const found = page.locator('#sidebar .conversations a', { hasText: 'Headphones for John' }).locator('.match');
      await found.waitFor();
      assert.equal(await found.innerText(), 'status of order 24601');
      assert.equal(await found.locator('mark').innerText(), '24601');
      if (process.env.SHOTS_DIR) await page.screenshot({ path: `${process.env.SHOTS_DIR}/search-match-1280.png` });
      await search.fill('no such title anywhere');
      await page.getByText('No conversation has “no such title anywhere” in its title or your messages.').waitFor();
      await search.fill('');

      // delete: the confirmation can keep it; then it goes once Undo is no longer offered, and the page says so
      await (await options(page)).getByRole('button', { name: 'Delete…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete “Headphones for John”?' });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Keep it' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal((await app.call('GET', `/v1/conversations/${id}`)).status, 200, 'kept');
      await (await options(page)).getByRole('button', { name: 'Delete…' }).click();
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('Deleted “Headphones for John”.').waitFor();
      assert.equal(new URL(page.url()).pathname, '/');
      assert.equal((await app.call('GET', `/v1/conversations/${id}`)).status, 404);
      await page.waitForFunction(
        () =>
          ![...(globalThis as any).document.querySelectorAll('#sidebar .conversations a')].some((a: any) =>
            a.textContent.includes('Headphones for John'),
          ),
      );
    });
  });

  test('a conversation deleted elsewhere says so and leaves the list', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page.getByRole('article', { name: 'Support' }).getByRole('button', { name: 'Ask “status of order 24601”' }).click();
      await page.waitForURL(/\/c\//);
      await page.locator('.msg.tool', { hasText: 'Order 24601' }).waitFor();
      const id = /\/c\/([^/]+)/.exec(page.url())![1]!;
      await page.locator(`#sidebar a[href="/c/${id}"]`).waitFor();
      assert.equal((await app.call('DELETE', `/v1/conversations/${id}`)).status, 204);
      await page.getByRole('heading', { level: 1, name: 'This conversation was deleted' }).waitFor();
      assert.match(await visibleText(page), /no longer in your list/);
      await page.locator(`#sidebar a[href="/c/${id}"]`).waitFor({ state: 'detached' });
      await assertNoDeveloperWords(page, 'deleted elsewhere');
    });
  });

  test('every agent tile starts a conversation with that agent', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      for (const [label, agent] of [
        ['Support', 'support'],
        ['Recipes', 'recipes'],
      ] as const) {
        await openHome(page);
        await page
          .getByRole('article', { name: label })
          .getByRole('button', { name: /^Start/ })
          .click();
        await page.waitForURL(/\/c\//);
        const id = /\/c\/([^/]+)/.exec(page.url())![1]!;
        assert.equal((await app.call('GET', `/v1/conversations/${id}`)).body.agent, agent);
      }
      // the sous chef asks which recipe first: its tile opens the form, chosen
      await openHome(page);
      await page
        .getByRole('article', { name: 'Sous chef' })
        .getByRole('button', { name: /^Start/ })
        .click();
      const form = page.getByRole('form', { name: 'Start a conversation' });
      assert.equal(await form.getByLabel('Agent').inputValue(), 'sous');
      await form.getByRole('button', { name: 'Start', exact: true }).click();
      await page.waitForURL(/\/c\//);
      assert.equal((await app.call('GET', `/v1/conversations/${/\/c\/([^/]+)/.exec(page.url())![1]}`)).body.agent, 'sous');
      await page
        .getByRole('region', { name: /Recipe|Lemon garlic/i })
        .first()
        .waitFor()
        .catch(() => undefined);

      // a bar's token starts the beer agent at once, with its first prompt
      await signInByLink(page, app.baseUrl, GUS_GREAT_LAKES);
      await page.getByRole('article', { name: 'Beer' }).getByRole('button', { name: 'Ask “my top beers”' }).click();
      await page.waitForURL(/\/c\//);
      const beer = /\/c\/([^/]+)/.exec(page.url())![1]!;
      assert.equal((await app.call('GET', `/v1/conversations/${beer}`, { token: GUS_GREAT_LAKES })).body.agent, 'beer');
      await page.locator('.msg.user', { hasText: 'my top beers' }).waitFor();
      await page.locator('.msg.tool').first().waitFor();
      await waitReady(page);
      await assertNoDeveloperWords(page, 'beer: my top beers');
    });
  });
});

describe('people’s words', () => {
  test('the support flow: an approval decided by keyboard keeps the focus, a rejection is said once, Stop is a calm line', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page
        .getByRole('article', { name: 'Support' })
        .getByRole('button', { name: /^Start/ })
        .click();
      await page.waitForURL(/\/c\//);
      await sendMessage(page, 'look up john@gmail.com');
      const found = page.locator('.msg.tool', { hasText: 'Found John Doe' });
      await found.waitFor();
      assert.match(await found.innerText(), /Found John Doe .*, with \d+ orders?\./, 'one customer, with their orders counted as orders');
      assert.doesNotMatch(await found.innerText(), /results?\b/);
      await waitReady(page);

      // keyboard approve: the focus goes to what the decision did, not to the page
      await sendMessage(page, 'update 1213210 phone 555-123-4567');
      const card = page.getByRole('article', { name: /Approve: Change the contact details/ });
      await card.waitFor();
      await card.getByRole('button', { name: 'Approve', exact: true }).focus();
      await page.keyboard.press('Enter');
      await card.waitFor({ state: 'detached' });
      await page.locator('.msg.record', { hasText: 'You approved' }).waitFor();
      await page.waitForFunction(() => {
        const active = (globalThis as any).document.activeElement;
        return active && active.tagName !== 'BODY' && active.closest('.transcript') !== null;
      });
      await waitReady(page);

      // a rejection is said once, where the item opened
      await sendMessage(page, 'cancel order 13579');
      const cancel = page.getByRole('article', { name: /Approve: Cancel order 13579/ });
      await cancel.waitFor();
      await cancel.getByRole('button', { name: 'Reject…' }).click();
      await page.keyboard.type('wrong customer');
      await cancel.getByRole('button', { name: 'Reject', exact: true }).click();
      await page.locator('.msg.record', { hasText: 'You declined' }).waitFor();
      await waitReady(page);
      const said = (await visibleText(page)).match(/You declined: cancel order 13579 \(wrong customer\)/g) ?? [];
      assert.equal(said.length, 1, 'the rejection is printed once');

      // Stop while an approval waits: a calm line in the person's words
      await sendMessage(page, 'cancel order 13579');
      await cancel.waitFor();
      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await page
        .getByText(/You stopped this answer/)
        .first()
        .waitFor();
      await waitReady(page);
      assert.equal(await page.locator('.banner.error').count(), 0, 'Stop is not an error');
      await assertNoDeveloperWords(page, 'support flow');
    });
  });

  test('the recipes and sous flows read without developer words', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page.getByRole('article', { name: 'Recipes' }).getByRole('button', { name: 'Ask “list my recipes”' }).click();
      await page.waitForURL(/\/c\//);
      await page.locator('.msg.tool').first().waitFor();
      await waitReady(page);
      await assertNoDeveloperWords(page, 'recipes: list my recipes');

      await openHome(page);
      await page.getByRole('article', { name: 'Sous chef' }).getByRole('button', { name: 'Ask “make it for 4”' }).click();
      await page.getByRole('form', { name: 'Start a conversation' }).getByRole('button', { name: 'Start', exact: true }).click();
      await page.waitForURL(/\/c\//);
      await page.locator('.msg.user', { hasText: 'make it for 4' }).waitFor();
      await page.locator('.pending-card, .msg.assistant').first().waitFor();
      await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent !== 'Working…');
      await assertNoDeveloperWords(page, 'sous: make it for 4');
    });
  });
});

describe('the connection and the system’s settings', () => {
  test('a banner says the server cannot be reached, and goes away on reconnect', async (t) => {
    const { page, context } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page
        .getByRole('article', { name: 'Support' })
        .getByRole('button', { name: /^Start/ })
        .click();
      await page.waitForURL(/\/c\//);
      const banner = page.locator('.connection-banner');
      assert.equal(await banner.count(), 0);
      await context.setOffline(true);
      try {
        await sendMessage(page, 'status of order 24601');
        await banner.waitFor();
        assert.match(await banner.innerText(), /cannot be reached/);
        assert.equal(await page.getByRole('alert').filter({ hasText: 'cannot be reached' }).count(), 1, 'said once, in the banner');
        // the send that failed gives the text back to the box (the banner may show a moment before it does)
        const box = page.getByLabel('Message', { exact: true });
        const deadline = Date.now() + 5_000;
        while ((await box.inputValue()) !== 'status of order 24601' && Date.now() < deadline) await page.waitForTimeout(50);
        assert.equal(await box.inputValue(), 'status of order 24601', 'what was typed is kept');
        await assertShell(page, 'offline');
      } finally {
        await context.setOffline(false);
      }
      await banner.waitFor({ state: 'detached', timeout: 15_000 });
      await page.getByLabel('Message', { exact: true }).press('Enter');
      await page.locator('.msg.tool', { hasText: 'Order 24601' }).waitFor();
    });
  });

  test('dark mode follows the system setting', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      const background = () =>
        page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.documentElement).backgroundColor as string);
      await page.emulateMedia({ colorScheme: 'light' });
      const light = await background();
      await page.emulateMedia({ colorScheme: 'dark' });
      const dark = await background();
      const luminance = (rgb: string) =>
        rgb
          .match(/\d+/g)!
          .slice(0, 3)
          .map(Number)
          .reduce((a, b) => a + b, 0) / 3;
      assert.ok(luminance(light) > 200, `light: ${light}`);
      assert.ok(luminance(dark) < 60, `dark: ${dark}`);
      await page.emulateMedia({ colorScheme: 'light' });
    });
  });
});
