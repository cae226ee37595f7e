// A message typed while an approval waits decides nothing by itself (issue 46, item 3): the composer holds
// it and offers both, in words: "Send as my answer: decline" (it declines the approval, as the reason) and
// "Send after I decide" (the conversation holds it and sends it once the approval is decided). At 1280 and
// 375 px.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts));

const userTexts = async (page: Page) => page.locator('ol.transcript .msg.user > p').allInnerTexts();

for (const width of [1280, 375]) {
  describe(`the composer while an approval waits, at ${width} px`, () => {
    test('a typed message is held with the choice in words; decline declines the approval, keep waits for the decision', async (t) => {
      const { page } = browser;
      await page.setViewportSize({ width, height: width > 500 ? 860 : 740 });
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ALICE);
        await startConversation(page, 'support', `Choice ${width}`);

        // decline: typed while the approval waits, held, then sent as the reason
        await sendMessage(page, 'cancel order 13579');
        const card = page.getByRole('article', { name: /Approve: Cancel order 13579/ });
        await card.waitFor();
        await sendMessage(page, 'wrong customer, leave it');
        const held = page.locator('.held', { hasText: 'wrong customer, leave it' });
        await held.waitFor();
        assert.match(await held.innerText(), /item above waits for your decision/);
        await page.waitForTimeout(500);
        assert.equal(await card.count(), 1, 'the approval still waits: the message decided nothing');
        assert.ok(!(await userTexts(page)).some((text) => text.includes('wrong customer')), 'not sent yet');
        await held.getByRole('button', { name: 'Send as my answer: decline' }).click();
        await card.waitFor({ state: 'detached' });
        await page
          .locator('.msg.record', { hasText: 'Declined with your message: cancel order 13579 (wrong customer, leave it)' })
          .waitFor();
        await page.locator('ol.transcript .msg.user', { hasText: 'wrong customer, leave it' }).waitFor();
        await page.getByText('Waiting for you').waitFor({ state: 'detached' });

        // keep: held by the conversation until the approval is decided, then sent as the next turn
        await sendMessage(page, 'cancel order 13579');
        await card.waitFor();
        await sendMessage(page, 'look up john@gmail.com');
        await page.getByRole('button', { name: 'Send after I decide' }).click();
        const waiting = page.locator('.held-server', { hasText: 'look up john@gmail.com' });
        await waiting.waitFor();
        assert.equal(await card.count(), 1, 'the approval still waits');
        await card.getByRole('button', { name: 'Approve', exact: true }).click();
        await page.locator('.msg.tool', { hasText: 'Found John Doe' }).waitFor({ timeout: 20_000 });
        await waiting.waitFor({ state: 'detached' });
        const users = await userTexts(page);
        assert.deepEqual(users.slice(-2), ['cancel order 13579', 'look up john@gmail.com'], 'the held message came after the decision');
      });
    });
  });
}
