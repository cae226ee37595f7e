// Agents on a schedule in the web client (issue 48), at 1280 and 375 px, clicking as a person would: a schedule
// made on the Schedules page runs every 10 s, its last run links to the conversation it made (which waits on an
// approval), Pause and Resume follow, Delete asks first (Enter keeps), a bad interval is refused in words, and a
// schedule that paused itself says why until it is resumed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { temporalScheduleId } from '../../src/shared/schedules.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, signInByLink, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

const WENDY = 'token-wendy-support-schedules-000';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts), {
  env: { SCHEDULE_MIN_INTERVAL: '10s' },
  tokens: { [WENDY]: { user: 'wendy-schedules', roles: ['support'] } },
});

/** The Schedules link: in the top bar, or on a phone in the menu's drawer. */
async function goToSchedules(page: Page): Promise<void> {
  if ((page.viewportSize()?.width ?? 1280) < 800) await page.getByRole('button', { name: 'Conversations' }).click();
  await page.getByRole('link', { name: 'Schedules' }).click();
}

for (const width of [1280, 375] as const) {
  test(`at ${width} px: make a schedule, follow its run to its conversation, pause, resume and delete it`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await goToSchedules(page);
      await page.getByRole('heading', { level: 1, name: 'Schedules' }).waitFor();
      await page.getByText('You have no schedules.').waitFor();

      // agents by the names the home page gives them, not their ids
      assert.deepEqual(await page.getByLabel('Agent').locator('option').allTextContents(), ['Recipes', 'Sous chef', 'Support']);
      await page.getByLabel('Agent').selectOption('support');
      await page.getByLabel('Message').fill('cancel order 13579');
      await page.getByLabel(/^Every/).fill('5s');
      await page.getByRole('button', { name: 'Make a schedule' }).click();
      await page.getByRole('alert').getByText('every: must be at least 10s').waitFor();

      await page.getByLabel(/^Every/).fill('10s');
      await page.getByRole('button', { name: 'Make a schedule' }).click();
      const card = page.getByRole('list', { name: 'Your schedules' }).getByRole('listitem');
      await card.getByText('every 10s').waitFor();
      assert.equal(await card.locator('.schedule-head strong').innerText(), 'Support');
      assert.equal(await card.locator('.schedule-text').innerText(), 'cancel order 13579');
      assert.notEqual(await card.locator('dd').first().innerText(), '—', 'the next run is shown');
      assert.ok((await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)) <= width, 'no sideways scroll');

      // the list follows the runs by itself: a run within 10 s, read again within 5 s
      const link = card.getByRole('link', { name: 'its conversation' });
      await link.waitFor({ timeout: 40_000 });
      assert.match(await card.locator('dd').nth(1).innerText(), /^Sent /);
      await link.click();
      await page.waitForURL(/\/c\/[0-9a-f-]{36}$/);
      await page.getByRole('button', { name: 'Approve' }).waitFor({ timeout: 30_000 });

      await goToSchedules(page);
      await card.getByRole('button', { name: 'Pause' }).click();
      await card.getByText('Paused', { exact: true }).waitFor();
      assert.equal(await card.locator('dd').first().innerText(), '—', 'no next run while paused');
      await card.getByRole('button', { name: 'Resume' }).click();
      await card.getByRole('button', { name: 'Pause' }).waitFor();
      assert.equal(await card.getByText('Paused', { exact: true }).count(), 0);

      await card.getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete this schedule?' });
      await dialog.waitFor();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(await card.count(), 1, 'Enter kept it');
      await card.getByRole('button', { name: 'Delete' }).click();
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('You have no schedules.').waitFor();
      assert.deepEqual((await app.call('GET', '/v1/schedules')).body.schedules, []);
    });
  });
}

test('a schedule that paused itself shows why, and Resume starts it again', async (t) => {
  const { page } = browser;
  await page.setViewportSize({ width: 1280, height: 860 });
  await withScreenshot(t, import.meta.filename, page, async () => {
    const made = await app.call('POST', '/v1/schedules', {
      token: WENDY,
      body: { agent: 'support', text: 'cancel order 13579', every: '10s' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    // the role goes from her record, as when a provider stops granting it; her next run pauses the schedule
    await app.adminQuery("UPDATE users SET roles = '{}' WHERE user_id = 'wendy-schedules'");
    for (let i = 0; i < 90; i++) {
      const [row] = await app.adminQuery('SELECT paused FROM schedules WHERE id = $1', [made.body.id]);
      if (row.paused) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // signing in records her token's roles again, the support role among them
    await signInByLink(page, app.baseUrl, WENDY);
    await goToSchedules(page);
    const card = page.getByRole('list', { name: 'Your schedules' }).getByRole('listitem');
    await card.getByText('Paused', { exact: true }).waitFor();
    await card.getByText('Paused: Only users with the "support" role may use the support agent.').waitFor();
    await card.getByRole('button', { name: 'Resume' }).click();
    await card.getByRole('button', { name: 'Pause' }).waitFor();
    assert.equal(await card.getByText(/^Paused: Only users/).count(), 0, 'the reason goes with the pause');
    const described = await app.client.schedule.getHandle(temporalScheduleId(made.body.id)).describe();
    assert.equal(described.state.paused, false);
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`, { token: WENDY })).status, 204);
  });
});

test('a schedule into one of your conversations: a run that finds an open item there shows it was skipped, and why', async (t) => {
  const { page } = browser;
  await page.setViewportSize({ width: 1280, height: 860 });
  await withScreenshot(t, import.meta.filename, page, async () => {
    const conversation = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Order desk' } });
    const parked = await app.call('POST', `/v1/conversations/${conversation.body.id}/messages`, { body: { text: 'cancel order 13579' } });
    assert.equal(parked.body.pending.length, 1, JSON.stringify(parked.body));
    await signInByLink(page, app.baseUrl, ALICE);
    await goToSchedules(page);
    await page.getByLabel('Agent').selectOption('support');
    await page.getByLabel('Message').fill('any news?');
    await page.getByLabel(/^Every/).fill('10s');
    await page.getByLabel('Into').selectOption({ label: 'Order desk' });
    await page.getByRole('button', { name: 'Make a schedule' }).click();
    const card = page.getByRole('list', { name: 'Your schedules' }).getByRole('listitem').filter({ hasText: 'any news?' });
    await card.getByText(/^Skipped /).waitFor({ timeout: 40_000 });
    await card.getByText('Skipped: the conversation has an open item waiting for you.', { exact: false }).waitFor();
    assert.equal(await card.getByRole('link', { name: 'its conversation' }).getAttribute('href'), `/c/${conversation.body.id}`);
    const schedules = (await app.call('GET', '/v1/schedules')).body.schedules;
    for (const schedule of schedules) assert.equal((await app.call('DELETE', `/v1/schedules/${schedule.id}`)).status, 204);
  });
});
