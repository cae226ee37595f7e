// Reload is exact (issue 46, item 2): the transcript is built from the event order, the same on every load,
// at 1280 and 375 px (on about one load in four the decision records jumped to the end); and a reload in the
// middle of a brewery run follows its progress to the end (it froze at "Search: in progress" while the run's
// question was already waiting).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { FakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { ALICE, ERIN_BEER_STAFF, type TestApp } from '../support/test-app.ts';
import { type Browser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { breweryApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;
let breweryDb: FakeOpenBreweryDb;

breweryApp((parts) => void ({ app, browser, breweryDb } = parts), '60s');

/** The transcript's rows as the page shows them, each as its kind and its first line. */
const rows = (page: Page) =>
  page
    .locator('ol.transcript > li')
    .evaluateAll((items) =>
      items.map((li) => `${li.className.split(' ').slice(0, 2).join('.')}: ${(li.textContent ?? '').trim().split('\n')[0]!.slice(0, 80)}`),
    );

const waitReady = (page: Page) =>
  page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');

for (const width of [1280, 375]) {
  describe(`reloads at ${width} px`, () => {
    test('eight reloads show the same order, each decision record where its item opened', async (t) => {
      const { page } = browser;
      await page.setViewportSize({ width, height: width > 500 ? 860 : 740 });
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ALICE);
        await startConversation(page, 'support', `Reloads ${width}`);
        await sendMessage(page, 'update 1213210 phone 555-123-4567');
        const update = page.getByRole('article', { name: /Approve: Change the contact details/ });
        await update.getByRole('button', { name: 'Approve', exact: true }).click();
        await page.locator('.msg.record', { hasText: 'You approved' }).waitFor();
        await waitReady(page);
        await sendMessage(page, 'cancel order 13579');
        const cancel = page.getByRole('article', { name: /Approve: Cancel order 13579/ });
        await cancel.getByRole('button', { name: 'Reject…' }).click();
        await page.keyboard.type('wrong customer');
        await cancel.getByRole('button', { name: 'Reject', exact: true }).click();
        await page.locator('.msg.record', { hasText: 'You declined' }).waitFor();
        await waitReady(page);
        await sendMessage(page, 'look up john@gmail.com');
        await page.locator('.msg.tool', { hasText: 'Found John Doe' }).waitFor();
        await waitReady(page);

        const seen: string[][] = [];
        for (let load = 0; load < 8; load++) {
          await page.reload();
          await page.locator('.msg.tool', { hasText: 'Found John Doe' }).waitFor();
          await page.locator('.msg.record', { hasText: 'You declined' }).waitFor();
          await waitReady(page);
          // what streams in after the first paint has landed: the rows stay as they are for a moment
          let shown = await rows(page);
          for (let settled = false; !settled;) {
            await page.waitForTimeout(300);
            const again = await rows(page);
            settled = JSON.stringify(again) === JSON.stringify(shown);
            shown = again;
          }
          seen.push(shown);
        }
        for (const [load, shown] of seen.entries()) assert.deepEqual(shown, seen[0], `load ${load + 1} shows the same order as the first`);
        const order = seen[0]!;
        const approved = order.findIndex((row) => row.includes('You approved'));
        const declined = order.findIndex((row) => row.includes('You declined'));
        const lookup = order.findIndex((row) => row.includes('look up john@gmail.com'));
        assert.ok(approved > 0 && declined > approved && lookup > declined, `records in place: ${JSON.stringify(order)}`);
        assert.match(order[declined + 1]!, /Not run|rejected|declined|not done/i, 'the refused call follows its record');
      });
    });
  });
}

test('a reload in the middle of a brewery run follows its progress to the end', async (t) => {
  const { page } = browser;
  await page.setViewportSize({ width: 1280, height: 860 });
  // the search takes a while, so the reload lands in it
  breweryDb.delayAll(2_500);
  t.after(() => breweryDb.delayAll(0));
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ERIN_BEER_STAFF);
    await startConversation(page, 'beer', 'Reload mid-run', { client: 'CLT-CCW784' });
    await sendMessage(page, 'Recommend some new breweries for my bar');
    const progress = page.getByRole('region', { name: 'Progress' }).last();
    await progress.getByText('Search: in progress').waitFor({ timeout: 20_000 });
    await page.reload();

    // after the reload the card goes on with the run: the search ends, the question opens, the card says so
    const card = page.getByRole('region', { name: 'Progress' }).last();
    const choice = page.getByRole('article', { name: 'Would you like details on any of them?' });
    await choice.waitFor({ timeout: 30_000 });
    await card.getByText('Search: done').waitFor();
    await card.getByText('Confirmation: in progress').waitFor();
    await choice.getByRole('button', { name: 'No' }).click();
    await choice.waitFor({ state: 'detached' });
    await card.getByText('Summary: skipped').waitFor({ timeout: 20_000 });
    await card.getByText(/^Done$/).waitFor();
    assert.doesNotMatch(await card.innerText(), /in progress/, 'no step is left in progress');
  });
});
