// A message's actions in the web client (issue 45 item 5, issue 46 item 6), in real Chromium against the offline
// model at 1280 and 375 px: an edit sends a new version and the turn runs from there (‹ 1/2 › goes back to the
// old question and its answer), a regenerate answers otherwise as a second version, a fork opens a new
// conversation with the path up to the message, and Copy puts the message's words on the clipboard.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { reply, startFakeGemini } from '../support/fake-gemini.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, pageDoesNotScroll, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp(async (parts) => {
  ({ app, browser } = parts);
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
});

async function shot(page: Page, name: string): Promise<void> {
  // with SHOTS_DIR set, each step is also saved there as a screenshot (as readable-results does)
  if (process.env.SHOTS_DIR) await page.screenshot({ path: path.join(process.env.SHOTS_DIR, `${name}.png`) });
}

const transcript = (page: Page) => page.locator('ol.transcript');
const userRow = (page: Page, text: string) => page.locator('.msg.user', { has: page.locator('p', { hasText: text }) });
/** the answers on screen, finished ones only */
const answers = (page: Page) => page.locator('ol.transcript .msg.assistant:not(.streaming)');
/** the words of the message row that holds the focus */
const focusedRow = (page: Page) =>
  page.evaluate(() => (globalThis as any).document.activeElement?.closest('[data-message-id]')?.querySelector('p')?.textContent ?? '');
const ready = (page: Page) => page.locator('.status-ready').waitFor({ state: 'attached' });

async function versionOf(row: Locator): Promise<string> {
  return (await row.locator('.version-count').innerText()).replace(/\s+/g, '');
}

for (const width of [1280, 375] as const) {
  const size = { width, height: width === 1280 ? 860 : 740 };

  test(`at ${width} px an edit sends a new version: 2/2, and ‹ goes back to 1/2 with the old answer`, async (t) => {
    const { page } = browser;
    await page.setViewportSize(size);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Edit ${width}`);
      await sendMessage(page, 'status of order 24601');
      await transcript(page).getByText('Wireless Headphones').first().waitFor();
      await ready(page);

      const first = userRow(page, 'status of order 24601');
      await first.getByRole('button', { name: 'Edit' }).click();
      const editor = page.getByLabel('Edit your message');
      assert.equal(await editor.inputValue(), 'status of order 24601');
      // Escape cancels: the text stays, the focus is back on Edit
      await editor.fill('something else');
      await editor.press('Escape');
      await first.locator('p', { hasText: 'status of order 24601' }).waitFor();
      assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Edit');

      await first.getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Edit your message').fill('status of order 13579');
      await page.getByLabel('Edit your message').press('Enter');

      const edited = userRow(page, 'status of order 13579');
      await edited.locator('.version-count').waitFor();
      await transcript(page).getByText('Smartphone Case').first().waitFor();
      await ready(page);
      assert.equal(await versionOf(edited), '2/2');
      assert.equal(await focusedRow(page), 'status of order 13579', 'the focus is on the new version');
      assert.equal(await userRow(page, 'status of order 24601').count(), 0, 'the old question is off this branch');
      assert.doesNotMatch(await transcript(page).innerText(), /Wireless Headphones/, 'the old answer is off this branch');
      assert.equal(await edited.getByRole('button', { name: 'Next version' }).isDisabled(), true);
      await shot(page, `edit-2of2-${width}`);

      await edited.getByRole('button', { name: 'Previous version' }).click();
      const back = userRow(page, 'status of order 24601');
      await back.locator('.version-count', { hasText: '1' }).waitFor();
      assert.equal(await versionOf(back), '1/2');
      assert.equal(await focusedRow(page), 'status of order 24601', 'the focus follows to the version shown');
      assert.equal(
        await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label')),
        'Next version',
        'on the version button that can still be pressed',
      );
      await transcript(page).getByText('Wireless Headphones').first().waitFor();
      assert.doesNotMatch(await transcript(page).innerText(), /Smartphone Case|order 13579/, 'only the old branch is on screen');
      assert.equal(await back.getByRole('button', { name: 'Previous version' }).isDisabled(), true);
      const still = await pageDoesNotScroll(page);
      assert.ok(still.ok, still.detail);
      await shot(page, `edit-back-1of2-${width}`);

      // the page read again shows the same branch
      await page.reload();
      await userRow(page, 'status of order 24601').locator('.version-count').waitFor();
      assert.equal(await versionOf(userRow(page, 'status of order 24601')), '1/2');
      assert.equal(await userRow(page, 'status of order 13579').count(), 0);
    });
  });

  test(`at ${width} px regenerate answers otherwise, as version 2/2`, async (t) => {
    const { page } = browser;
    await page.setViewportSize(size);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Regenerate ${width}`);
      await sendMessage(page, 'hello there');
      await answers(page).first().waitFor();
      await ready(page);
      const before = await answers(page).first().locator('.md').innerText();

      await answers(page).first().getByRole('button', { name: 'Regenerate' }).click();
      const again = answers(page).filter({ has: page.locator('.version-count') });
      await again.waitFor();
      await ready(page);
      assert.equal(await answers(page).count(), 1, 'one answer on the branch');
      assert.equal(await versionOf(again), '2/2');
      const after = await again.locator('.md').innerText();
      assert.notEqual(after, before);
      await shot(page, `regenerate-2of2-${width}`);

      await again.getByRole('button', { name: 'Previous version' }).click();
      await answers(page)
        .filter({ has: page.locator('.version-count', { hasText: '1' }) })
        .waitFor();
      assert.equal(await answers(page).first().locator('.md').innerText(), before);
    });
  });

  test(`at ${width} px a regenerated lookup shows its versions on the answer, not on the step that asked for the tool`, async (t) => {
    const { page } = browser;
    await page.setViewportSize(size);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Regenerate a lookup ${width}`);
      await sendMessage(page, 'status of order 24601');
      const answer = answers(page).filter({ hasText: 'Wireless Headphones' });
      await answer.waitFor();
      await ready(page);

      await answer.getByRole('button', { name: 'Regenerate' }).click();
      const versioned = answers(page).filter({ has: page.locator('.version-count') });
      await versioned.waitFor();
      await ready(page);
      assert.equal(await versioned.count(), 1, 'one row shows the versions');
      assert.match(await versioned.innerText(), /Wireless Headphones/, 'the answer shows them');
      assert.equal(await versionOf(versioned), '2/2');
      assert.equal(await transcript(page).locator('.tool-call').count(), 1, 'the step that asked for the tool is on screen');
      // the focus moves once the answer is drawn: give it a moment, then judge
      await page
        .waitForFunction(
          () => /Wireless Headphones/.test((globalThis as any).document.activeElement?.closest('[data-message-id]')?.textContent ?? ''),
          undefined,
          {
            timeout: 5000,
          },
        )
        .catch(() => undefined);
      assert.match(await focusedRow(page), /Wireless Headphones/, 'the focus is on the new answer, not on the step');
      await shot(page, `regenerate-lookup-2of2-${width}`);

      await versioned.getByRole('button', { name: 'Previous version' }).click();
      await answers(page)
        .filter({ has: page.locator('.version-count', { hasText: '1' }) })
        .filter({ hasText: 'Wireless Headphones' })
        .waitFor();
      assert.match(await focusedRow(page), /Wireless Headphones/, 'the focus stays on the versions');
    });
  });

  test(`at ${width} px "Fork into a new conversation" opens one with the path up to the message`, async (t) => {
    const { page } = browser;
    await page.setViewportSize(size);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      const source = await startConversation(page, 'support', `Fork ${width}`);
      await sendMessage(page, 'status of order 24601');
      await transcript(page).getByText('Wireless Headphones').first().waitFor();
      await ready(page);
      await sendMessage(page, 'status of order 13579');
      await transcript(page).getByText('Smartphone Case').first().waitFor();
      await ready(page);

      // fork from the first question's answer: the second exchange is not in the fork
      const firstAnswer = answers(page).filter({ hasText: 'Wireless Headphones' }).last();
      await firstAnswer.getByLabel('More actions').click();
      await shot(page, `fork-menu-${width}`);
      await firstAnswer.getByRole('button', { name: 'Fork into a new conversation' }).click();
      await page.waitForURL((url) => /\/c\//.test(url.pathname) && !url.pathname.endsWith(source));
      await page.getByRole('heading', { level: 1, name: /Fork .* \(fork\)/ }).waitFor();
      await userRow(page, 'status of order 24601').waitFor();
      await transcript(page).getByText('Wireless Headphones').first().waitFor();
      assert.equal(await userRow(page, 'status of order 13579').count(), 0, 'the fork ends at the message');
      assert.doesNotMatch(await transcript(page).innerText(), /Smartphone Case/);
      const still = await pageDoesNotScroll(page);
      assert.ok(still.ok, still.detail);
    });
  });

  test(`at ${width} px Copy puts a message's words on the clipboard and says so`, async (t) => {
    const { page } = browser;
    await page.setViewportSize(size);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Copy ${width}`);
      await sendMessage(page, 'hello, copy me');
      await answers(page).first().waitFor();
      await ready(page);

      const question = userRow(page, 'hello, copy me');
      await question.getByRole('button', { name: 'Copy' }).focus();
      await page.keyboard.press('Enter');
      await question.getByRole('status').getByText('Copied').waitFor();
      assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), 'hello, copy me');

      const answer = answers(page).first();
      await answer.getByRole('button', { name: 'Copy' }).click();
      await answer.getByRole('status').getByText('Copied').waitFor();
      const copied = await page.evaluate(() => (globalThis as any).navigator.clipboard.readText());
      assert.match(copied, /offline model/);
      await shot(page, `copy-${width}`);
    });
  });
}

test('an edit while an approval waits leaves it behind: its card and record go, and its branch says it was not done', async (t) => {
  const { page } = browser;
  await page.setViewportSize({ width: 1280, height: 860 });
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await startConversation(page, 'support', 'Left behind');
    await sendMessage(page, 'cancel order 13579');
    const card = page.getByRole('article', { name: /Approve/ });
    await card.waitFor();
    await page.locator('.msg.record', { hasText: 'Waiting for you' }).waitFor();

    await userRow(page, 'cancel order 13579').getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Edit your message').fill('status of order 24601');
    await page.getByLabel('Edit your message').press('Enter');
    await transcript(page).getByText('Wireless Headphones').first().waitFor();
    await ready(page);
    assert.equal(await card.count(), 0, 'the approval is gone');
    assert.equal(await page.locator('.msg.record').count(), 0, "the left branch's record is not on this one");

    await userRow(page, 'status of order 24601').getByRole('button', { name: 'Previous version' }).click();
    await userRow(page, 'cancel order 13579').waitFor();
    // the parked turn ended because the person moved on, not by a Stop of theirs: not done, not declined
    await page.locator('.msg.record', { hasText: 'so this was not done: cancel order 13579' }).waitFor();
    assert.equal(await card.count(), 0, 'nothing waits on the old branch either');
    assert.doesNotMatch(await transcript(page).innerText(), /Wireless Headphones|You declined|Waiting for you|You stopped/);
    await shot(page, 'left-behind-1280');
  });
});

test('while an answer is being written the actions say why they wait, and send nothing', async (t) => {
  // a model held mid-turn, so the turn runs as long as the test needs (the offline model answers at once)
  const fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  const slow = await startTestApp({ env: { GEMINI_API_KEY: 'test-gemini-key', GEMINI_BASE_URL: fake.baseUrl } });
  t.after(async () => {
    await browser.page.goto('about:blank').catch(() => undefined);
    await slow.stop();
    await fake.close();
  });
  const { page } = browser;
  await page.setViewportSize({ width: 1280, height: 860 });
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, slow.baseUrl, ALICE);
    await startConversation(page, 'support', 'Busy');
    fake.script(reply.text('The first answer.'));
    await sendMessage(page, 'first question');
    await answers(page).filter({ hasText: 'The first answer.' }).waitFor();
    await ready(page);

    const held = reply.hold(reply.text('The second answer.'));
    fake.script(held);
    await sendMessage(page, 'second question');
    await held.reached;
    const question = userRow(page, 'first question');
    const edit = question.getByRole('button', { name: 'Edit' });
    assert.equal(await edit.getAttribute('aria-disabled'), 'true');
    // still reachable: pressed from the keyboard, it says why instead of opening (Playwright does not click aria-disabled)
    await edit.focus();
    await page.keyboard.press('Enter');
    await question.getByRole('status').getByText('Not while the agent is answering').waitFor();
    assert.equal(await page.getByLabel('Edit your message').count(), 0, 'no editor opens');
    const answer = answers(page).filter({ hasText: 'The first answer.' });
    await answer.getByRole('button', { name: 'Regenerate' }).click({ force: true });
    await answer.getByRole('status').getByText('Not while the agent is answering').waitFor();
    const asked = fake.requests.length;

    held.release();
    await answers(page).filter({ hasText: 'The second answer.' }).waitFor();
    await ready(page);
    assert.equal(fake.requests.length, asked, 'nothing was sent for the refused actions');
    assert.equal(await page.locator('.version-count').count(), 0, 'no new version was made');
    assert.equal(await question.getByRole('button', { name: 'Edit' }).getAttribute('aria-disabled'), null, 'available again');
  });
});
