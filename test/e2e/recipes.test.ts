// The recipes agent through the web client: "save this recipe: ..." opens an approval, the save pipeline's
// progress shows live, and the recipe card appears with its image, name, type, prep time and servings.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../../src/stack/ports.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, assertAgentFeature, buildWebClient, launchBrowser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';

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
  await assertAgentFeature(app.baseUrl, ALICE, 'recipes', 'the save_recipe tool', (info) => info.tools.some((tool) => tool.name === 'save_recipe'));
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    const id = await startConversation(page, 'recipes', 'Cocktails');
    await sendMessage(page, `save this recipe: ${OLD_FASHIONED}`);

    const card = page.getByRole('article', { name: /Approve: Save the recipe “Old Fashioned cocktail” to My recipes/ });
    await card.waitFor();
    assert.match(await card.locator('.args').innerText(), /Old Fashioned cocktail/);
    await card.getByRole('button', { name: 'Approve' }).click();

    // the pipeline's five steps, as they happen
    const progress = page.locator('section.progress');
    await progress.waitFor();
    await progress.getByText('5 of 5 steps').waitFor({ timeout: 30_000 });

    const recipe = page.getByRole('article', { name: 'Recipe: Old Fashioned' });
    await recipe.waitFor();
    const facts = await recipe.locator('.facts').innerText();
    assert.match(facts, /Type\s+cocktail/);
    assert.match(facts, /Prep time\s+5 min/);
    assert.match(facts, /Servings\s+1/);
    const image = recipe.getByRole('img', { name: 'Photo of Old Fashioned' });
    await image.waitFor();
    await page.waitForFunction((el) => { const img = el as unknown as { complete: boolean; naturalWidth: number }; return img.complete && img.naturalWidth > 0; }, await image.elementHandle());

    // an action writes a request for the agent into the message box
    await recipe.getByRole('button', { name: 'Delete' }).click();
    assert.match(await page.getByLabel('Message', { exact: true }).inputValue(), /Delete my recipe "Old Fashioned"/);

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
