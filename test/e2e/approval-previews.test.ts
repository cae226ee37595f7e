// Approvals show what they touch (issue 46, item 3), in real Chromium against the offline model at 1280 and
// 375 px: a cancel shows the order's product, price, status and customer; a contact change each field's current
// value → its new one; a recipe save the recipe as it will be saved, its ingredients a list, not the raw text;
// and the record after the decision says what was approved, an edited value included. Screenshots go to
// SHOTS_DIR (default test-results/approval-previews) for a person to look at.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { OLD_FASHIONED } from '../support/recipes.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';
import {
  type Browser,
  fullyInViewAboveComposer,
  pageDoesNotScroll,
  sendMessage,
  signInByLink,
  startConversation,
  withScreenshot,
} from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

const SHOTS = process.env.SHOTS_DIR ?? path.join('test-results', 'approval-previews');

let app: TestApp;
let browser: Browser;

offlineApp((parts) => {
  ({ app, browser } = parts);
  fs.mkdirSync(SHOTS, { recursive: true });
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** The card in view, whole above the composer, and the page not scrolling sideways. */
async function assertLaidOut(page: Page, card: Locator, what: string): Promise<void> {
  await card.scrollIntoViewIfNeeded();
  const inView = await fullyInViewAboveComposer(card);
  assert.ok(inView.ok, `${what}: the card is in view above the composer: ${inView.detail}`);
  const sideways = await pageDoesNotScroll(page);
  assert.ok(sideways.ok, `${what}: ${sideways.detail}`);
}

// Seed orders in Processing and customers (src/agents/support/migrations), one per width: a cancel changes them.
const CASES = {
  1280: {
    order: { id: '13579', product: 'Smartphone Case', quantity: '2', price: '$19.99', customer: 'John Doe (customer 1213210)' },
    contact: { id: '2837622', name: 'Priya Patel', phone: '987-654-3210', asked: '555-000-1111', edited: '555-000-2222' },
  },
  375: {
    order: { id: '19283', product: 'Wireless Mouse', quantity: '1', price: '$34.99', customer: 'Hiroshi Nakamura (customer 5190753)' },
    contact: { id: '4782901', name: 'Aaliyah Davis', phone: '111-222-3333', asked: '555-000-3333', edited: '555-000-4444' },
  },
} as const;

for (const width of [1280, 375] as const) {
  const { order, contact } = CASES[width];

  test(`at ${width} px a cancel's approval shows the order: product, price, status, customer`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Cancel ${width}`);
      await sendMessage(page, `cancel order ${order.id}`);
      const card = page.getByRole('article', { name: `Approve: Cancel order ${order.id}?` });
      await card.waitFor();
      const preview = card.getByRole('region', { name: `Order ${order.id} to cancel` });
      await preview.waitFor();
      const facts = await preview.locator('dl.facts').innerText();
      assert.match(facts, new RegExp(`Product\\s+${order.product}`));
      assert.match(facts, new RegExp(`Quantity\\s+${order.quantity}`));
      assert.match(facts, new RegExp(`Price\\s+\\${order.price}`));
      assert.match(facts, /Status\s+Processing/);
      assert.match(facts, new RegExp(`Customer\\s+${order.customer.replace(/[()]/g, '\\$&')}`));
      assert.equal(await card.locator('dl.args').count(), 0, 'the order in place of its bare number');
      await assertLaidOut(page, card, 'cancel');
      await shot(page, `cancel-${width}`);

      await card.getByRole('button', { name: 'Approve' }).click();
      const record = page.locator('.msg.record.closed', { hasText: 'You approved' });
      await record.waitFor();
      assert.match(
        await record.innerText(),
        new RegExp(
          `cancel order ${order.id}\\. ${order.product} × ${order.quantity}, \\${order.price} for ${order.customer.split(' (')[0]}, processing when approved\\.`,
        ),
      );
      await page.getByText(`Order ${order.id} is cancelled.`).first().waitFor();
    });
  });

  test(`at ${width} px a contact change's approval shows current → new, and the record the edited value`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Contact ${width}`);
      await sendMessage(page, `update ${contact.id} phone ${contact.asked}`);
      const card = page.getByRole('article', { name: new RegExp(`^Approve: Change the contact details of customer ${contact.id}`) });
      await card.waitFor();
      const preview = card.getByRole('region', { name: `Contact details of ${contact.name}` });
      await preview.waitFor();
      const rows = await preview.locator('tbody tr').allInnerTexts();
      assert.equal(rows.length, 1, 'only the field that changes');
      assert.match(rows[0]!, new RegExp(`^Phone\\s+${contact.phone}\\s+→\\s+${contact.asked}$`));
      assert.equal(await preview.locator('td.old').innerText(), contact.phone);
      assert.equal(await preview.locator('td.new').innerText(), contact.asked);
      await assertLaidOut(page, card, 'contact change');
      await shot(page, `contact-${width}`);

      await card.getByRole('button', { name: 'Change…' }).click();
      await card.getByLabel(/^Phone/).fill(contact.edited);
      await card.getByRole('button', { name: 'Approve with these changes' }).click();
      const record = page.locator('.msg.record.closed', { hasText: 'You approved with changes' });
      await record.waitFor();
      await page.waitForFunction(
        (edited) => ((globalThis as any).document.querySelector('.msg.record.closed')?.textContent ?? '').includes(`→ ${edited}.`),
        contact.edited,
      );
      // what ran, from what it was: the current value the approval showed → the value the person saved
      assert.match(await record.innerText(), new RegExp(`${contact.name}: phone ${contact.phone} → ${contact.edited}\\.$`));
    });
  });

  test(`at ${width} px a recipe save's approval shows the recipe as it will be saved, its ingredients a list`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'recipes', `Save ${width}`);
      await sendMessage(page, `save this recipe: ${OLD_FASHIONED}`);
      const card = page.getByRole('article', { name: /^Approve: Save the recipe/ });
      await card.waitFor();
      const preview = card.getByRole('region', { name: 'Recipe to save: Old Fashioned' });
      await preview.waitFor();
      assert.equal(await preview.getByRole('heading', { name: 'Old Fashioned' }).count(), 1);
      assert.deepEqual(await preview.getByRole('list', { name: 'Ingredients' }).getByRole('listitem').allInnerTexts(), [
        '2 oz bourbon',
        '1 sugar cube',
        '2 dashes Angostura bitters',
        'orange peel',
      ]);
      assert.deepEqual(await preview.getByRole('list', { name: 'Steps' }).getByRole('listitem').allInnerTexts(), [
        'Muddle sugar with bitters',
        'Add bourbon and ice',
        'Stir',
        'Garnish with orange peel',
      ]);
      assert.match(await preview.innerText(), /Cocktail · serves 1 · 5 min prep/);
      assert.doesNotMatch(await card.innerText(), /Ingredients: 2 oz bourbon/, 'not the raw text');
      await assertLaidOut(page, card, 'recipe save');
      await shot(page, `recipe-${width}`);

      await card.getByRole('button', { name: 'Approve' }).click();
      const record = page.locator('.msg.record.closed', { hasText: 'You approved' });
      await record.waitFor({ timeout: 60_000 });
      assert.match(await record.innerText(), /Old Fashioned, 4 ingredients and 4 steps\.$/);
    });
  });
}
