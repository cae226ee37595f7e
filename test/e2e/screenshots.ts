// Screenshots of each agent's main flow at 1280 px and 375 px, for docs/screenshots/ and the README's
// docs/screenshot.png. Not part of the suite (it writes into docs/): `npm run screenshots`.
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { freePort } from '../../stack/ports.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { ALICE, GUS_GREAT_LAKES, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, buildWebClient, launchBrowser, sendMessage, signInByLink, startConversation } from './browser.ts';

const DOCS = path.resolve(import.meta.dirname, '../../docs');
const OUT = path.join(DOCS, 'screenshots');

let app: TestApp;
let browser: Browser;
let breweryDb: FakeOpenBreweryDb;

before(async () => {
  await buildWebClient();
  breweryDb = await startFakeOpenBreweryDb();
  [app, browser] = await Promise.all([
    startTestApp({ apiPort: await freePort(), env: { OPENBREWERYDB_BASE_URL: breweryDb.baseUrl, BEER_CONFIRMATION_TIMEOUT: '10m' } }),
    launchBrowser(),
  ]);
  fs.mkdirSync(OUT, { recursive: true });
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await breweryDb?.close();
});

async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(400);
  await page.screenshot({ path: path.join(OUT, name) });
}

/** the same flow at both widths: the wide one first, then the phone on a fresh conversation */
async function both(name: string, flow: (page: Page, width: number) => Promise<void>): Promise<void> {
  const { page } = browser;
  for (const [width, height] of [
    [1280, 860],
    [375, 760],
  ] as const) {
    await page.setViewportSize({ width, height });
    await flow(page, width);
    await shoot(page, `${name}-${width}.png`);
  }
  await page.setViewportSize({ width: 1280, height: 860 });
}

test('home: the agents as tiles', async () => {
  await both('home', async (page) => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.goto(`${app.baseUrl}/`);
    await page.locator('ul.tiles article').first().waitFor();
  });
});

test('support: a question from its tile (the title made from it), then an approval waiting', async () => {
  await both('support', async (page) => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.goto(`${app.baseUrl}/`);
    await page.getByRole('article', { name: 'Support' }).getByRole('button', { name: /^Ask/ }).click();
    await page.locator('.msg.tool').first().waitFor();
    await page.getByRole('heading', { level: 1, name: /Status of order 24601/ }).waitFor({ timeout: 20_000 });
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');
    await sendMessage(page, 'cancel order 13579');
    await page.getByRole('article', { name: /Approve: Cancel order 13579/ }).waitFor();
  });
  fs.copyFileSync(path.join(OUT, 'support-1280.png'), path.join(DOCS, 'screenshot.png'));
});

test('recipes: a recipe saved, its card', async () => {
  await both('recipes', async (page) => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.goto(`${app.baseUrl}/`);
    await startConversation(page, 'recipes', `Cocktails ${Date.now() % 1000}`);
    await sendMessage(
      page,
      'save this recipe: Old Fashioned cocktail. Ingredients: 2 oz bourbon, 1 sugar cube, 2 dashes Angostura bitters, orange peel. Instructions: 1) Muddle sugar with bitters, 2) Add bourbon and ice, 3) Stir, 4) Garnish with orange peel. Prep time: 5 minutes. Serves: 1. Type: cocktail.',
    );
    const card = page.getByRole('article', { name: /Approve: Save the recipe “Old Fashioned cocktail” to My recipes/ });
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('article', { name: 'Recipe: Old Fashioned' }).first().waitFor({ timeout: 60_000 });
  });
  await browser.page.getByRole('link', { name: 'My recipes', exact: true }).click();
  await browser.page.getByRole('heading', { name: 'Old Fashioned' }).first().waitFor();
  await shoot(browser.page, 'my-recipes-1280.png');
});

test('sous: the recipe beside the chat, hard avoids with their control', async () => {
  await both('sous', async (page) => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.goto(`${app.baseUrl}/`);
    await page.getByLabel('Agent').selectOption('sous');
    await page.getByLabel('Never use (comma separated)').fill('peanut, shellfish');
    await page.getByLabel('Title (optional)').fill(`Dinner ${Date.now() % 1000}`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('complementary', { name: 'Recipe' }).getByRole('heading', { name: 'Lemon garlic spaghetti' }).waitFor();
  });
});

test('beer: recommendations for the bar, one to choose', async () => {
  await both('beer', async (page) => {
    await signInByLink(page, app.baseUrl, GUS_GREAT_LAKES);
    await page.goto(`${app.baseUrl}/`);
    await startConversation(page, 'beer', `New taps ${Date.now() % 1000}`);
    await sendMessage(page, 'recommend breweries');
    await page.locator('.pending-card').first().waitFor({ timeout: 60_000 });
  });
});
