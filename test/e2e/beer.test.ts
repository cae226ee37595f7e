// The beer agent through the web client: a bar's recommendations come as a choice with a visible countdown;
// one run is answered within it (then the summary shows its cache state and sources), another is left to
// time out. OpenBreweryDB is the local fake over the fixture dataset; the model is the offline one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, GUS_GREAT_LAKES, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, assertAgentFeature, buildWebClient, launchBrowser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';

const CLIENT = 'CLT-CCW784'; // a San Diego bar in the fixture
const CONFIRMATION_MS = 6_000;
// Beer staff may open a conversation for any client.
const TOKEN = ERIN_BEER_STAFF;

let app: TestApp;
let browser: Browser;
let breweryDb: FakeOpenBreweryDb;

before(async () => {
  await buildWebClient();
  breweryDb = await startFakeOpenBreweryDb();
  [app, browser] = await Promise.all([
    startTestApp({ env: { OPENBREWERYDB_BASE_URL: breweryDb.baseUrl, BEER_CONFIRMATION_TIMEOUT: `${CONFIRMATION_MS}ms` } }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await breweryDb?.close();
});

test('a brewery chosen within the countdown, then another run left to time out', async (t) => {
  await assertAgentFeature(app.baseUrl, TOKEN, 'beer', 'the recommend_breweries tool', (info) => info.tools.some((tool) => tool.name === 'recommend_breweries'));
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app!.baseUrl, TOKEN);
    await startConversation(page, 'beer', 'New taps', { client: CLIENT });
    // the conversation says which bar it acts for, by name
    await page.locator('.conversation-head').getByText('Ballast Point Brewing Company').waitFor();
    assert.doesNotMatch(await page.locator('.conversation-head').innerText(), /CLT-/);

    await sendMessage(page, 'Recommend some new breweries for my bar');
    const choice = page.getByRole('article', { name: 'Would you like details on any of them?' });
    await choice.waitFor({ timeout: 20_000 });
    const options = choice.getByRole('radio');
    assert.ok((await options.count()) >= 3, 'three to five breweries to choose from');
    const countdown = choice.getByTestId('countdown');
    const first = await countdown.innerText();
    assert.match(first, /^\d s$/);
    await page.waitForFunction((el) => el?.textContent !== undefined && el.textContent !== (el as unknown as { dataset: Record<string, string> }).dataset.first, await countdown.evaluateHandle((el) => {
      (el as unknown as { dataset: Record<string, string> }).dataset.first = el.textContent ?? '';
      return el;
    }));
    assert.match(await countdown.innerText(), /^\d s$/, 'the countdown ticks');

    const second = choice.locator('label.option').nth(1);
    const chosenName = await second.locator('.option-name').innerText();
    await second.click();
    await choice.getByRole('button', { name: `Yes, ${chosenName}` }).click();
    await choice.waitFor({ state: 'detached' });

    const summary = page.getByRole('article', { name: `Summary: ${chosenName}` });
    await summary.waitFor({ timeout: 20_000 });
    assert.match(await summary.locator('.cache-line').innerText(), /^(fresh fetched just now, not from the cache|cached from the cache \(fresh\)|stale from the cache \(stale: the source could not be reached\))/);
    assert.match(await summary.locator('.sources-line').innerText(), /^Sources:/);
    assert.ok((await page.locator('.brewery-cards .brewery-card').count()) >= 3, 'the presented breweries as cards');
    await page.locator('.msg.record', { hasText: `yes: ${chosenName}` }).waitFor();

    // a second run nobody answers: the countdown runs out and the conversation says so
    await sendMessage(page, 'Recommend some new breweries for my bar');
    const again = page.getByRole('article', { name: 'Would you like details on any of them?' });
    await again.waitFor({ timeout: 20_000 });
    await again.waitFor({ state: 'detached', timeout: CONFIRMATION_MS + 10_000 });
    await page.locator('.msg.record', { hasText: /expired|no answer in time/i }).waitFor();
    assert.equal(await page.locator('.pending-card').count(), 0);
  });
});

test("a conversation's bar is readable by its owner only", async () => {
  const created = await app.call('POST', '/v1/conversations', { token: GUS_GREAT_LAKES, body: { agent: 'beer', title: 'Taps' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const own = await app.call('GET', `/v1/conversations/${created.body.id}/bar`, { token: GUS_GREAT_LAKES });
  assert.equal(own.status, 200);
  assert.deepEqual(own.body, { clientId: 'CLT-XLX836', name: 'Great Lakes Brewing Company', city: 'Cleveland', state: 'Ohio' });
  assert.equal((await app.call('GET', `/v1/conversations/${created.body.id}/bar`, { token: TOKEN })).status, 404, "another user's conversation");
  const support = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal((await app.call('GET', `/v1/conversations/${support.body.id}/bar`)).status, 404, 'not a beer conversation');
});
