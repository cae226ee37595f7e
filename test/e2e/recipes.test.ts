// The recipes agent through the web client: "save this recipe: ..." opens an approval, the save pipeline's
// progress shows live, and the recipe card appears with its image, name, type, prep time and servings.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../../stack/ports.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import type { Page } from 'playwright-core';
import {
  type Browser,
  assertAgentFeature,
  buildWebClient,
  launchBrowser,
  sendMessage,
  signInByLink,
  startConversation,
  visibleTranscript,
  withScreenshot,
  consoleErrorsDuring,
} from './browser.ts';

const OLD_FASHIONED =
  'Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. ' +
  'Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. ' +
  'Prep time: 5 minutes. Serves: 1. Type: cocktail.';

let app: TestApp;
let browser: Browser;
let dataDir: string;

before(async () => {
  await buildWebClient();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-e2e-recipes-'));
  // a fixed port, so the absolute image URLs the pipeline writes point at this app
  [app, browser] = await Promise.all([startTestApp({ apiPort: await freePort(), env: { DATA_DIR: dataDir } }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

test('a recipe is saved: approval, live progress, then its card with the image', async (t) => {
  await assertAgentFeature(app.baseUrl, ALICE, 'recipes', 'the save_recipe tool', (info) =>
    info.tools.some((tool) => tool.name === 'save_recipe'),
  );
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    const id = await startConversation(page, 'recipes', 'Cocktails');
    await sendMessage(page, `save this recipe: ${OLD_FASHIONED}`);

    const card = page.getByRole('article', { name: /Approve: Save the recipe “Old Fashioned cocktail” to My recipes/ });
    await card.waitFor();
    // the recipe as it will be saved, not its raw text (test/e2e/approval-previews.test.ts has the whole of it)
    await card.getByRole('region', { name: 'Recipe to save: Old Fashioned' }).waitFor();
    assert.equal(await card.locator('.args').count(), 0);
    await page.locator('.msg.record', { hasText: 'Waiting for you: save the recipe' }).waitFor();
    // From the click on, what the page says about the approval is recorded: the pipeline is quick offline.
    await recordWords(page);
    await card.getByRole('button', { name: 'Approve' }).click();

    // the pipeline's five steps, as they happen
    const progress = page.locator('section.progress');
    await progress.waitFor();
    await progress.getByText('5 of 5 steps').waitFor({ timeout: 30_000 });

    const recipe = page.getByRole('article', { name: 'Recipe: Old Fashioned' });
    await recipe.waitFor();
    await page.locator('.msg.record', { hasText: 'You approved: save the recipe' }).waitFor();
    const said = await recordedWords(page);
    // once approved, nothing on the page says it waits for the person: it says it works on it, then the result
    assert.deepEqual(
      said.filter((words) => /waiting for you/i.test(words)),
      [],
      said.join('\n'),
    );
    assert.ok(
      said.some((words) => /Approved: Save the recipe “Old Fashioned cocktail” to My recipes/.test(words) && /Working on it/.test(words)),
      said.join('\n'),
    );
    assert.ok(
      said.some((words) => /You approved: save the recipe “Old Fashioned cocktail” to My recipes\. Working on it/.test(words)),
      said.join('\n'),
    );
    const facts = await recipe.locator('.facts').innerText();
    assert.match(facts, /Type\s+cocktail/);
    assert.match(facts, /Prep time\s+5 min/);
    assert.match(facts, /Servings\s+1/);
    const image = recipe.getByRole('img', { name: 'Photo of Old Fashioned' });
    await image.waitFor();
    await page.waitForFunction(
      (el) => {
        const img = el as unknown as { complete: boolean; naturalWidth: number };
        return img.complete && img.naturalWidth > 0;
      },
      await image.elementHandle(),
    );

    // an action writes a request for the agent into the message box, naming the recipe by id
    await recipe.getByRole('button', { name: 'Delete' }).click();
    assert.match(await page.getByLabel('Message', { exact: true }).inputValue(), /^Delete my recipe "Old Fashioned" \(id [0-9a-f-]{36}\)$/);
    await page.getByLabel('Message', { exact: true }).fill('');

    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.body.status, 'idle');

    // My recipes: search by name or ingredient, filter by type
    await page.getByRole('link', { name: 'My recipes', exact: true }).click();
    await page.getByRole('heading', { name: 'Old Fashioned' }).waitFor();
    await page.getByLabel('Search by name or ingredient').fill('bourbon');
    await page.getByRole('heading', { name: 'Old Fashioned' }).waitFor();
    await page.getByLabel('Search by name or ingredient').fill('gin');
    await page.getByText('No recipes match.').waitFor();
    await page.getByLabel('Search by name or ingredient').fill('');
    await page.getByLabel('Type').selectOption('dessert');
    await page.getByText('No recipes match.').waitFor();
    await page.getByLabel('Type').selectOption('cocktail');
    const saved = page.locator('.recipe-grid .recipe-card', { hasText: 'Old Fashioned' });
    await saved.waitFor();
    await saved.getByRole('button', { name: /Show ingredients and steps/ }).click();
    assert.match(await saved.locator('.recipe-detail').innerText(), /2 oz bourbon[\s\S]*Muddle sugar with bitters/);
  });
});

test("a recipe card's Modify and Delete work end to end with the offline model", async (t) => {
  const { page } = browser;
  const consoleErrors = consoleErrorsDuring(t, page);
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await startConversation(page, 'recipes', 'Puddings');
    await sendMessage(page, `save this recipe: ${RICE_PUDDING}`);
    await page
      .getByRole('article', { name: /Approve: Save the recipe “Rice pudding” to My recipes/ })
      .getByRole('button', { name: 'Approve' })
      .click();
    const card = page.getByRole('article', { name: 'Recipe: Rice pudding' });
    await card.waitFor({ timeout: 30_000 });
    const id = (await app.adminQuery<{ id: string }>("SELECT id FROM saved_recipes WHERE user_id = 'alice' AND name = 'Rice pudding'"))[0]!
      .id;
    const message = page.getByLabel('Message', { exact: true });

    // Modify: the request names the recipe; the person says what to change and sends it
    await card.getByRole('button', { name: 'Modify' }).click();
    assert.equal(await message.inputValue(), `Modify my recipe "Rice pudding" (id ${id}): `);
    await message.press('End');
    await message.pressSequentially('set servings to 6');
    await message.press('Enter');
    await page.locator('.msg.tool', { hasText: 'Changed the recipe in My recipes.' }).waitFor();
    assert.equal((await app.call('GET', `/v1/recipes/${id}`)).body.servings, 6);

    // Delete: a soft delete, the recipe leaves My recipes (and can be restored)
    await card.getByRole('button', { name: 'Delete' }).click();
    assert.equal(await message.inputValue(), `Delete my recipe "Rice pudding" (id ${id})`);
    await message.press('Enter');
    await page.locator('.msg.tool', { hasText: 'Deleted the recipe from My recipes (it can be restored).' }).waitFor();
    assert.equal((await app.call('GET', `/v1/recipes/${id}`)).body.is_deleted, true);
    assert.doesNotMatch(await visibleTranscript(page, { replies: true }), /\{"/, 'no JSON in the transcript, replies included');

    await page.getByRole('link', { name: 'My recipes', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'My recipes' }).waitFor();
    await page.getByLabel('Search by name or ingredient').fill('rice');
    await page.getByText('No recipes match.').waitFor();
    await page.getByLabel('Show deleted recipes').check();
    await page.locator('.recipe-grid .recipe-card.deleted', { hasText: 'Rice pudding' }).waitFor();
    assert.deepEqual(consoleErrors, [], 'no console errors');
  });
});

const RICE_PUDDING =
  'Rice pudding. Ingredients: 100 g pudding rice, 1 l milk, 50 g sugar, 1 vanilla pod. Instructions: 1) Simmer the rice in the milk, ' +
  '2) Stir in the sugar and vanilla, 3) Bake for 1 hour. Prep time: 10 minutes. Serves: 4. Type: dessert.';

/**
 * From the next click on an Approve button (caught before the page handles it), records the page's words
 * about pending items (the records, the cards, the status) at each change.
 */
async function recordWords(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = globalThis as any;
    w.__words = [];
    let last = '';
    const snap = () => {
      const words = [...w.document.querySelectorAll('.msg.record, .pending, .head-meta .status')]
        .map((el: any) => el.innerText)
        .join(' | ');
      if (words !== last) w.__words.push((last = words));
    };
    const start = (event: any) => {
      if (event.target?.textContent !== 'Approve') return;
      w.document.removeEventListener('click', start, true);
      new w.MutationObserver(snap).observe(w.document.body, { subtree: true, childList: true, characterData: true });
    };
    w.document.addEventListener('click', start, true);
  });
}

async function recordedWords(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as any).__words as string[]);
}
