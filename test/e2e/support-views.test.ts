// Support's results people can read (issue 46, item 5: each tool declares a view of its result), in real
// Chromium against the offline model at 1280 and 375 px: a lookup is a customer card with an orders table,
// a customer's orders are the table, an order is a card; no JSON, tool names or ids beyond the customer
// number in the row, and the table scrolls inside its box rather than the page.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Locator } from 'playwright-core';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts));

// John Doe's orders in the seed (src/agents/support/migrations), in the table's order
const JOHN_ORDERS = [
  ['13579', 'Smartphone Case', '2', '$19.99', 'Processing'],
  ['24601', 'Wireless Headphones', '1', '$79.99', 'Shipped'],
  ['90357', 'Smartphone Case', '1', '$19.99', 'Shipped'],
];
const TOOL_NAMES = /get_user_info|get_user|get_customer_orders|get_order_by_id|customer_id|user_info|username|johndoe/;

/** The table's rows as the cells a person reads, the row's header first. */
async function rows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell.textContent ?? '').trim())));
}

/** Everything in the row's DOM, hidden parts included: a closed "Details" toggle's JSON counts too. */
async function assertReadable(row: Locator, what: string): Promise<void> {
  const all = await row.evaluate((el) => el.textContent ?? '');
  assert.doesNotMatch(all, /[{}[\]]/, `${what}: no JSON in the row, hidden or not`);
  assert.doesNotMatch(all, TOOL_NAMES, `${what}: no tool or field names in the row`);
  assert.equal(await row.locator('pre, details').count(), 0, `${what}: no raw details`);
}

/** The table fits its box: it scrolls inside it, and the page never scrolls sideways. */
async function assertFits(table: Locator, what: string): Promise<void> {
  const box = table.locator('xpath=..');
  const fit = await box.evaluate((el) => {
    const win = globalThis as any;
    const rect = el.getBoundingClientRect();
    return {
      overflowX: win.getComputedStyle(el).overflowX,
      right: rect.right,
      width: win.innerWidth,
      page: win.document.documentElement.scrollWidth,
    };
  });
  assert.equal(fit.overflowX, 'auto', `${what}: the table's box scrolls`);
  assert.ok(fit.right <= fit.width, `${what}: the table's box ends inside the window (${fit.right} > ${fit.width})`);
  assert.ok(fit.page <= fit.width, `${what}: the page does not scroll sideways (${fit.page} > ${fit.width})`);
}

for (const width of [1280, 375] as const) {
  test(`at ${width} px a lookup is a customer card with an orders table, orders a table, an order a card`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    try {
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ALICE);
        await startConversation(page, 'support', `Views ${width}`);

        await sendMessage(page, 'look up john@gmail.com');
        const card = page.getByRole('article', { name: 'Customer John Doe' });
        await card.waitFor();
        assert.equal(await card.getByRole('heading', { name: 'John Doe' }).count(), 1);
        const facts = await card.locator('dl.facts').innerText();
        assert.match(facts, /Customer number\s+1213210/);
        assert.match(facts, /Email\s+john@gmail\.com/);
        assert.match(facts, /Phone\s+123-456-7890/);
        const table = card.getByRole('table', { name: 'Orders of John Doe' });
        assert.deepEqual(await table.locator('thead th').allInnerTexts(), ['Order', 'Product', 'Quantity', 'Price', 'Status']);
        assert.deepEqual(await table.locator('thead th[scope="col"]').count(), 5);
        assert.deepEqual(await rows(table), JOHN_ORDERS);
        assert.equal(await table.locator('tbody th[scope="row"]').count(), 3);
        const lookup = page.locator('.msg.tool', { has: card });
        await assertReadable(lookup, 'the lookup');
        await assertFits(table, 'the lookup');

        await sendMessage(page, 'orders for 1213210');
        const orders = page.getByRole('table', { name: 'Orders of customer 1213210' });
        await orders.waitFor();
        assert.deepEqual(await rows(orders), JOHN_ORDERS);
        await assertReadable(page.locator('.msg.tool', { has: orders }), 'the orders');
        await assertFits(orders, 'the orders');

        await sendMessage(page, 'status of order 24601');
        const order = page.getByRole('article', { name: 'Order 24601' });
        await order.waitFor();
        const text = await order.innerText();
        for (const fact of [/Product\s+Wireless Headphones/, /Quantity\s+1/, /Price\s+\$79\.99/, /Status\s+Shipped/])
          assert.match(text, fact);
        await assertReadable(page.locator('.msg.tool', { has: order }), 'the order');
      });
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });
}
