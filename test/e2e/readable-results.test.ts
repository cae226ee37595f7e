// Results people can read for the recipes and beer agents (issue 46, item 5: each tool declares a view of its
// result), in real Chromium against the offline model at 1280 and 375 px: a recipe list is cards by name, a
// guarded SQL query's rows a table that scrolls inside its box; a brewery search is cards (type, city, website,
// phone), the bar's profile a card, a sales question's rows a table, and a choice's countdown stays in view
// while its cards scroll by. No JSON, tool or field names, or ids anywhere in a result's row.
// With SHOTS_DIR set, each view is also saved there as a screenshot.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import type { FakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { ALICE, ERIN_BEER_STAFF, type TestApp } from '../support/test-app.ts';
import { type Browser, launchBrowser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { breweryApp } from './app-and-browser.ts';

const CLIENT = 'CLT-CCW784'; // a San Diego bar in the fixture
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const TOOL_NAMES =
  /execute_recipe_sql|save_recipe|search_breweries_tool|get_client_profile_tool|run_analytical_query_tool|recommend_breweries|recipe_type|prep_time|brewery_name|client_name|top5_beers|CLT-|GEMINI_API_KEY/;

let app: TestApp;
let browser: Browser;
let breweryDb: FakeOpenBreweryDb;

breweryApp(async (parts) => {
  ({ app, browser, breweryDb } = parts);
  await app.adminQuery(
    `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, cook_time, servings, tags)
     VALUES (gen_random_uuid(), 'alice', 'Buttered noodles', 'food', $1::jsonb, $2::jsonb, 5, 10, 2, '["quick"]'::jsonb),
            (gen_random_uuid(), 'alice', 'Old Fashioned', 'cocktail', $1::jsonb, $2::jsonb, 5, NULL, 1, '["classic", "bourbon"]'::jsonb),
            (gen_random_uuid(), 'alice', 'Lemon tart', 'dessert', $1::jsonb, $2::jsonb, 30, 40, 8, '[]'::jsonb)`,
    [JSON.stringify([{ name: 'butter', quantity: '3', unit: 'tbsp', notes: null }]), JSON.stringify(['Mix.'])],
  );
}, '10m');

async function shot(page: Page, name: string): Promise<void> {
  if (process.env.SHOTS_DIR) await page.screenshot({ path: path.join(process.env.SHOTS_DIR, `${name}.png`) });
}

/** Everything in the row's DOM, hidden parts included: a closed "Details" toggle's JSON counts too. */
async function assertReadable(row: Locator, what: string): Promise<void> {
  const all = await row.evaluate((el) => el.textContent ?? '');
  assert.doesNotMatch(all, /[{}]/, `${what}: no JSON in the row, hidden or not`);
  assert.doesNotMatch(all, TOOL_NAMES, `${what}: no tool, field or setting names in the row`);
  assert.doesNotMatch(all, UUID, `${what}: no ids in the row`);
  assert.equal(await row.locator('pre, details').count(), 0, `${what}: no raw details`);
}

/** The table fits its box: it scrolls inside it, and the page never scrolls sideways. */
async function assertFits(table: Locator, what: string): Promise<void> {
  const fit = await table.locator('xpath=..').evaluate((el) => {
    const win = globalThis as any;
    return {
      overflowX: win.getComputedStyle(el).overflowX,
      right: el.getBoundingClientRect().right,
      width: win.innerWidth,
      page: win.document.documentElement.scrollWidth,
    };
  });
  assert.equal(fit.overflowX, 'auto', `${what}: the table's box scrolls`);
  assert.ok(fit.right <= fit.width, `${what}: the box ends inside the window (${fit.right} > ${fit.width})`);
  assert.ok(fit.page <= fit.width, `${what}: the page does not scroll sideways (${fit.page} > ${fit.width})`);
}

async function assertRealTable(table: Locator, columns: number): Promise<void> {
  assert.equal(await table.locator('caption').count(), 1, 'a caption');
  assert.equal(await table.locator('thead th[scope="col"]').count(), columns, 'column headers with scope');
  assert.ok((await table.locator('tbody th[scope="row"]').count()) >= 1, 'row headers with scope');
}

for (const width of [1280, 375] as const) {
  const height = width === 1280 ? 860 : 740;

  test(`at ${width} px a recipe list is cards by name, a SQL query's rows a table`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height });
    try {
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ALICE);
        await startConversation(page, 'recipes', `Readable recipes ${width}`);

        await sendMessage(page, 'list my recipes');
        const list = page.getByRole('list', { name: '3 recipes' });
        await list.waitFor();
        for (const name of ['Buttered noodles', 'Old Fashioned', 'Lemon tart'])
          assert.equal(await list.getByRole('heading', { name }).count(), 1, `a card named ${name}`);
        const noodles = await list.getByRole('article', { name: 'Recipe Buttered noodles' }).innerText();
        for (const fact of [/Type\s+Food/, /Prep time\s+5 min/, /Cook time\s+10 min/, /Serves\s+2/, /Tags\s+quick/])
          assert.match(noodles, fact);
        const listed = page.locator('.msg.tool', { has: list });
        assert.match(await listed.innerText(), /Found 3 recipes\./);
        await assertReadable(listed, 'the recipe list');
        // the offline model's reply names them, without their ids
        const listReply = page.locator('ol.transcript > li.msg.assistant').filter({ hasText: '3 recipes:' }).last();
        await listReply.waitFor();
        assert.doesNotMatch(await listReply.innerText(), UUID, 'no ids in the reply');
        await list.scrollIntoViewIfNeeded();
        await shot(page, `recipes-list-${width}`);

        await sendMessage(
          page,
          'run sql: SELECT recipe_type AS kind_of_recipe, count(*) AS number_of_recipes, avg(prep_time) AS average_preparation_minutes, max(servings) AS largest_number_of_servings FROM saved_recipes GROUP BY recipe_type ORDER BY recipe_type',
        );
        const table = page.getByRole('table', { name: '3 rows' });
        await table.waitFor();
        await assertRealTable(table, 4);
        // in the order the guarded executor returns them (its rows pass through jsonb: shorter names first)
        assert.deepEqual(await table.locator('thead th').allInnerTexts(), [
          'Kind of recipe',
          'Number of recipes',
          'Largest number of servings',
          'Average preparation minutes',
        ]);
        const rows = await table
          .locator('tbody tr')
          .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell.textContent ?? '').trim())));
        assert.deepEqual(rows, [
          ['cocktail', '1', '1', '5'],
          ['dessert', '1', '8', '30'],
          ['food', '1', '2', '5'],
        ]);
        const queried = page.locator('.msg.tool', { has: table });
        assert.match(await queried.innerText(), /The query found 3 rows\./);
        await assertReadable(queried, 'the query');
        await assertFits(table, 'the query');
        // the offline model's reply reads the rows in words too
        const reply = page.locator('ol.transcript > li.msg.assistant').filter({ hasText: '3 rows:' }).last();
        await reply.waitFor();
        assert.doesNotMatch(await reply.innerText(), /[{}[\]]/, 'no JSON in the reply');
        await table.scrollIntoViewIfNeeded();
        await shot(page, `recipes-sql-${width}`);
      });
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  test(`at ${width} px beer's search is brewery cards, the profile a card, sales a table, the countdown in view`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height });
    try {
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ERIN_BEER_STAFF);
        await startConversation(page, 'beer', `Readable beer ${width}`, { client: CLIENT });

        await sendMessage(page, 'find breweries in San Diego, CA');
        const searched = page
          .locator('.msg.tool')
          .filter({ has: page.locator('.brewery-cards') })
          .last();
        await searched.waitFor({ timeout: 20_000 });
        const cards = searched.locator('.brewery-cards');
        assert.match(await searched.innerText(), /Found \d+ breweries your bar does not buy from yet\./);
        assert.ok((await cards.locator('.brewery-card h3').count()) >= 2, 'a card per brewery, by name');
        assert.match(await cards.locator('.brewery-card').first().innerText(), /San Diego, California/, 'type and city');
        assert.ok((await cards.locator('a[href^="http"]').count()) >= 1, 'a website link');
        assert.ok((await cards.locator('a[href^="tel:"]').count()) >= 1, 'a phone number');
        await assertReadable(searched, 'the search');
        // a search finds up to 50: nine cards, the rest one click away
        const all = Number(/Found (\d+)/.exec(await searched.innerText())![1]);
        assert.equal(await cards.locator('.brewery-card').count(), Math.min(all, 9));
        await cards.scrollIntoViewIfNeeded();
        await shot(page, `beer-search-${width}`);
        if (all > 9) {
          await searched.getByRole('button', { name: `Show all ${all} breweries` }).click();
          assert.equal(await cards.locator('.brewery-card').count(), all);
        }

        await sendMessage(page, 'my profile');
        const profile = page.getByRole('article', { name: /^Profile of / });
        await profile.waitFor();
        const facts = await profile.innerText();
        for (const fact of [/Where\s+San Diego, California/, /Top beers lately\s+\S/, /Bought from\s+\d+ breweries so far/])
          assert.match(facts, fact);
        await assertReadable(page.locator('.msg.tool', { has: profile }), 'the profile');
        // the offline model's reply reads it in words too, not "Client name: …; 3 top3 brewery types"
        const said = page.locator('ol.transcript > li.msg.assistant').filter({ hasText: 'Top beers lately:' }).last();
        await said.waitFor();
        assert.match(await said.locator('.md').innerText(), /^Ballast Point Brewing Company, San Diego, California\. Favourite kinds: /);
        assert.doesNotMatch(await said.innerText(), /top3|top5|Client name|CLT-/);
        await profile.scrollIntoViewIfNeeded();
        await shot(page, `beer-profile-${width}`);

        await sendMessage(page, 'my top beers');
        const sales = page.locator('.msg.tool table.result-table').last();
        await sales.waitFor();
        await assertRealTable(sales, await sales.locator('thead th').count());
        assert.ok((await sales.locator('thead th').count()) >= 2, 'at least two columns');
        const salesRow = page
          .locator('.msg.tool')
          .filter({ has: page.locator('table.result-table') })
          .last();
        await assertReadable(salesRow, 'the sales');
        await assertFits(sales, 'the sales');
        await sales.scrollIntoViewIfNeeded();
        await shot(page, `beer-sales-${width}`);

        await sendMessage(page, 'recommend breweries');
        const choice = page.getByRole('article', { name: 'Would you like details on any of them?' });
        await choice.waitFor({ timeout: 20_000 });
        // scrolled to its last card, the time left is still on screen
        await choice.locator('.brewery-card').last().scrollIntoViewIfNeeded();
        const countdown = choice.getByTestId('countdown');
        const box = await countdown.boundingBox();
        assert.ok(box && box.y >= 0 && box.y + box.height <= height, `the countdown is in view (${JSON.stringify(box)})`);
        await shot(page, `beer-choice-${width}`);
        await choice.getByRole('button', { name: 'No' }).click();
        await choice.waitFor({ state: 'detached' });
        await assertReadable(page.locator('.msg.tool').last(), 'the recommendation');
      });
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });
}

test("a 375 px phone's header is one row with nothing cut short: the links and the account are in the menu", async (t) => {
  const phone = await launchBrowser({ width: 375, height: 740 });
  t.after(() => phone.close());
  const { page } = phone;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    const bar = await page.evaluate(() => {
      const header = (globalThis as any).document.querySelector('.topbar');
      const shown = [...header.querySelectorAll('*')].filter((el: any) => el.offsetParent !== null && el.getClientRects().length > 0);
      return {
        height: header.getBoundingClientRect().height,
        text: header.innerText as string,
        // an element whose content is wider than its box is cut short (an ellipsis, a clipped link)
        // (a visually hidden label, 1 px wide on purpose, is read by a screen reader whole)
        cut: shown
          .filter((el: any) => el.clientWidth > 1 && el.scrollWidth > el.clientWidth + 1)
          .map((el: any) => el.outerHTML.slice(0, 80)),
        page: (globalThis as any).document.documentElement.scrollWidth,
        menuLeft: header.querySelector('.menu').getBoundingClientRect().left,
      };
    });
    assert.ok(bar.menuLeft < 40, `the menu starts the row: ${bar.menuLeft}`);
    assert.ok(bar.height <= 56, `one row: ${bar.height}`);
    assert.deepEqual(bar.cut, [], 'nothing in the header is cut short');
    assert.ok(bar.page <= 375, `no sideways scroll: ${bar.page}`);
    assert.doesNotMatch(bar.text, /My recip|Signed|Sign out|API keys/, 'the links and the account are not in the header');
    await shot(page, 'header-375');

    await page.getByRole('button', { name: 'Conversations' }).click();
    const drawer = page.locator('#sidebar');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#sidebar').getBoundingClientRect().left >= 0); // slid in
    for (const name of ['My recipes', 'API keys'])
      assert.ok(await drawer.getByRole('link', { name, exact: true }).isVisible(), `${name} in the menu`);
    assert.match(await drawer.locator('.who').innerText(), /^Signed in as alice/);
    assert.ok(await drawer.getByRole('button', { name: 'Sign out' }).isVisible(), 'Sign out in the menu');
    await shot(page, 'header-menu-375');
    await drawer.getByRole('link', { name: 'My recipes', exact: true }).click();
    await page.waitForURL(/\/recipes$/);
    await drawer.waitFor({ state: 'hidden', timeout: 2_000 }); // a link closes the menu
  });
});

test('at 1280 px the links and the account stay in the top bar, once', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    const header = page.locator('.topbar');
    for (const name of ['My recipes', 'API keys']) {
      assert.ok(await header.getByRole('link', { name, exact: true }).isVisible(), `${name} in the top bar`);
      assert.equal(await page.locator('a', { hasText: name }).count(), 1, `${name} once`);
    }
    assert.ok(await header.getByRole('button', { name: 'Sign out' }).isVisible());
    await shot(page, 'header-1280');
  });
});

for (const width of [1280, 375] as const) {
  test(`at ${width} px beer's failure offline is said once, in words, with Try again that sends the turn again`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    breweryDb.failAlways('drop');
    t.after(() => breweryDb.failAlways(undefined));
    try {
      await withScreenshot(t, import.meta.filename, page, async () => {
        await signInByLink(page, app.baseUrl, ERIN_BEER_STAFF);
        await startConversation(page, 'beer', `Offline failure ${width}`, { client: CLIENT });
        await sendMessage(page, 'recommend breweries');
        const progress = page.getByRole('region', { name: 'Progress' }).last();
        await progress.getByText('Failed', { exact: true }).waitFor({ timeout: 30_000 });
        const retry = page.getByRole('button', { name: 'Try again' });
        await retry.waitFor();
        const transcript = page.locator('ol.transcript');
        const shown = await transcript.innerText();
        // the reason once, in words: not in the progress card, the result and the reply each
        assert.equal(shown.match(/could not be reached/g)?.length, 1, `the failure said once:\n${shown}`);
        assert.match(shown, /Could not recommend new breweries for your bar: OpenBreweryDB could not be reached/);
        assert.match(await progress.innerText(), /Search: failed/);
        assert.match(shown, /That did not work this time; nothing was done\. You can try again\./);
        // on screen (the raw details stay behind their closed toggle)
        assert.doesNotMatch(shown, /GEMINI_API_KEY|attempts\)|UND_ERR|API_ERROR|[{}]/);
        assert.equal(await retry.count(), 1, 'one Try again');
        await retry.scrollIntoViewIfNeeded();
        await shot(page, `beer-failure-${width}`);

        // the source is back: Try again sends the same message as a new turn, and the run goes through
        breweryDb.failAlways(undefined);
        await retry.click();
        const choice = page.getByRole('article', { name: 'Would you like details on any of them?' });
        await choice.waitFor({ timeout: 20_000 });
        assert.equal(
          await page.locator('ol.transcript > li.msg.user', { hasText: 'recommend breweries' }).count(),
          2,
          'the turn sent again',
        );
        assert.equal(await retry.count(), 0, 'no Try again once it went through');
        await choice.getByRole('button', { name: 'No' }).click();
        await choice.waitFor({ state: 'detached' });
      });
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });
}
