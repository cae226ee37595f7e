// A conversation longer than its model's window (issue 44, item 2), in real Chromium: every message stays on the page,
// the transcript marks where the agent's model reads a summary instead, and the person can read that summary. The
// offline model and a small MODEL_CONTEXT_TOKENS: the path `npm start` takes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts), { env: { MODEL_CONTEXT_TOKENS: '3000' } });

test('the page keeps every message, marks where the summary begins, and shows the summary on request', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    const id = await startConversation(page, 'support', 'A long one');
    const filler = ' It is written here at length so that the turns fill the window.'.repeat(25);
    // through the API, as fast as a person could not type them; the page shows them as they come
    for (let n = 1; n <= 8; n += 1) {
      const turn = await app.call('POST', `/v1/conversations/${id}/messages`, {
        body: { text: `Fact ${n}: the locker code is ${n}${n}0${n}.${filler}` },
      });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
    }
    const deadline = Date.now() + 30_000;
    while (!(await app.call('GET', `/v1/conversations/${id}`)).body.context?.summarized) {
      assert.ok(Date.now() < deadline, 'no summary within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    await page.reload();
    const fold = page.locator('.msg.context-fold');
    await fold.waitFor();
    // every message is still on the page, the first one included
    await page.getByText('Fact 1: the locker code is 1101.', { exact: false }).first().waitFor();
    await page.getByText('Fact 8: the locker code is 8808.', { exact: false }).first().waitFor();
    await fold.getByRole('button', { name: 'Read the summary' }).click();
    const summary = page.getByLabel('What the agent reads of the messages above');
    await summary.getByText('The person said: Fact 1: the locker code is 1101.', { exact: false }).waitFor();
    assert.equal(await fold.getByRole('button', { name: 'Hide the summary' }).getAttribute('aria-expanded'), 'true');
  });
});
