// The beer agent through the web client: a bar's recommendations come as a choice with a visible countdown;
// one run is answered within it (then the summary shows its cache state and sources), another is left to
// time out. OpenBreweryDB is the local fake over the fixture dataset; the model is the offline one.
// Staff choose the bar by name from the bars they may act for; the header and the tab title name it, and
// an id that is no bar is refused in a sentence. An empty list still leaves a way to start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { FakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, GUS_GREAT_LAKES, type TestApp } from '../support/test-app.ts';
import {
  type Browser,
  assertAgentFeature,
  pageDoesNotScroll,
  sendMessage,
  signInByLink,
  startConversation,
  visibleTranscript,
  withScreenshot,
} from './browser.ts';
import { breweryApp } from './app-and-browser.ts';

const CLIENT = 'CLT-CCW784'; // a San Diego bar in the fixture
const CONFIRMATION_MS = 6_000;
// Beer staff may open a conversation for any client.
const TOKEN = ERIN_BEER_STAFF;

let app: TestApp;
let browser: Browser;
let breweryDb: FakeOpenBreweryDb;

breweryApp((parts) => void ({ app, browser, breweryDb } = parts), `${CONFIRMATION_MS}ms`);

/** The choice beer offers with its breweries: asked in a new conversation of the bar's, once it shows. */
async function recommendation(page: Page, title: string) {
  await signInByLink(page, app!.baseUrl, TOKEN);
  await startConversation(page, 'beer', title, { client: CLIENT });
  await sendMessage(page, 'Recommend some new breweries for my bar');
  return waitForChoice(page);
}

async function waitForChoice(page: Page) {
  const choice = page.getByRole('article', { name: 'Would you like details on any of them?' });
  await choice.waitFor({ timeout: 20_000 });
  return choice;
}

test('a brewery chosen within the countdown, then another run left to time out', async (t) => {
  await assertAgentFeature(app.baseUrl, TOKEN, 'beer', 'the recommend_breweries tool', (info) =>
    info.tools.some((tool) => tool.name === 'recommend_breweries'),
  );
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app!.baseUrl, TOKEN);
    await startConversation(page, 'beer', 'New taps', { client: CLIENT });
    // the conversation says which bar it acts for, by name
    await page.locator('.conversation-head').getByText('Ballast Point Brewing Company').waitFor();
    assert.doesNotMatch(await page.locator('.conversation-head').innerText(), /CLT-/);

    await sendMessage(page, 'Recommend some new breweries for my bar');
    const choice = await waitForChoice(page);
    const options = choice.getByRole('radio');
    assert.ok((await options.count()) >= 3, 'three to five breweries to choose from');
    const countdown = choice.getByTestId('countdown');
    const first = await countdown.innerText();
    assert.match(first, /^\d s$/);
    await page.waitForFunction(
      (el) => el?.textContent !== undefined && el.textContent !== (el as unknown as { dataset: Record<string, string> }).dataset.first,
      await countdown.evaluateHandle((el) => {
        (el as unknown as { dataset: Record<string, string> }).dataset.first = el.textContent ?? '';
        return el;
      }),
    );
    assert.match(await countdown.innerText(), /^\d s$/, 'the countdown ticks');
    // a step that has not reported yet is named, not numbered
    const progress = page.getByRole('region', { name: 'Progress' }).last();
    await progress.getByText('Summary: to do').waitFor();
    assert.doesNotMatch(await progress.innerText(), /Step \d/);

    const second = choice.locator('label.option').nth(1);
    const chosenName = await second.locator('.option-name').innerText();
    await second.click();
    await choice.getByRole('button', { name: `Yes, ${chosenName}` }).click();
    await choice.waitFor({ state: 'detached' });

    const summary = page.getByRole('article', { name: `Summary: ${chosenName}` });
    await summary.waitFor({ timeout: 20_000 });
    assert.match(
      await summary.locator('.cache-line').innerText(),
      /^(fresh fetched just now, not from the cache|cached from the cache \(fresh\)|stale from the cache \(stale: the source could not be reached\))/,
    );
    assert.match(await summary.locator('.sources-line').innerText(), /^Sources:/);
    assert.ok((await page.locator('.brewery-cards .brewery-card').count()) >= 3, 'the presented breweries as cards');
    await page.locator('.msg.record', { hasText: `yes: ${chosenName}` }).waitFor();

    // a second run nobody answers: the countdown runs out and the conversation says so
    await sendMessage(page, 'Recommend some new breweries for my bar');
    const again = await waitForChoice(page);
    await again.waitFor({ state: 'detached', timeout: CONFIRMATION_MS + 10_000 });
    await page.locator('.msg.record', { hasText: /expired|no answer in time/i }).waitFor();
    assert.equal(await page.locator('.pending-card').count(), 0);
    // the record names the question once ("so the confirmation (…) ran out"), not "this confirmation ran out: the confirmation"
    await page.locator('.msg.record', { hasText: /No answer in time, so the confirmation \(“.*”\) ran out\./ }).waitFor();
    // the reply's list ends with its breweries: the sentence after it is a paragraph, not part of the last item
    const reply = page.locator('ol.transcript > li.msg.assistant').filter({ hasText: 'No answer came in time' }).last();
    await reply.waitFor({ timeout: 20_000 });
    assert.doesNotMatch(await reply.locator('li').last().innerText(), /No answer came in time/);
  });
});

test('the breweries show as cards before the question whether to get details (issue 46, item 8)', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    const choice = await recommendation(page, 'Cards first');
    const cards = choice.locator('.brewery-cards .brewery-card');
    assert.equal(await cards.count(), await choice.getByRole('radio').count(), 'a card for each brewery to choose from');
    const before = await choice.evaluate((article) => {
      const list = article.querySelector('.brewery-cards');
      const question = article.querySelector('h2');
      return !!list && !!question && !!(list.compareDocumentPosition(question) & 4 /* DOCUMENT_POSITION_FOLLOWING */);
    });
    assert.ok(before, 'the cards come before the question');
    const first = await cards.first().innerText();
    assert.match(first, /San Diego, California/, 'type and city');
    assert.doesNotMatch(await choice.innerText(), /Unavailable/);
    assert.ok((await choice.locator('.brewery-card a[href^="http"]').count()) >= 1, 'a website link');
    assert.ok((await choice.locator('.brewery-card a[href^="tel:"]').count()) >= 1, 'a phone number');
    // as a person writes it, not ten bare digits
    for (const phone of await choice.locator('.brewery-card a[href^="tel:"]').allInnerTexts()) assert.doesNotMatch(phone, /^\d{10}$/);
    await choice.getByRole('button', { name: 'No' }).click();
    await choice.waitFor({ state: 'detached' });
  });
});

test('at 375 px the cards are one row that scrolls sideways, so the choice is on the same screen and the page never scrolls', async (t) => {
  const { page } = browser;
  await page.setViewportSize({ width: 375, height: 740 });
  try {
    await withScreenshot(t, import.meta.filename, page, async () => {
      const choice = await recommendation(page, 'Cards on a phone');
      const strip = choice.locator('.brewery-cards');
      const sizes = await strip.evaluate((list) => ({ height: list.clientHeight, scroll: list.scrollWidth, width: list.clientWidth }));
      assert.ok(sizes.scroll > sizes.width, `the row scrolls sideways (${sizes.scroll} px in ${sizes.width})`);
      const cards = (await strip.boundingBox())!;
      const first = (await choice.locator('label.option').first().boundingBox())!;
      const no = (await choice.getByRole('button', { name: 'No' }).boundingBox())!;
      const below = { first: Math.round(first.y - cards.y), no: Math.round(no.y + no.height - cards.y) };
      t.diagnostic(`the first choice starts ${below.first} px below the cards' top, the No button ends ${below.no} px below it`);
      // before, five cards stacked put the choice some 1,500 px below the first
      assert.ok(below.first < 450, `the first choice is ${below.first} px below the cards' top: on the same screen`);
      assert.ok(below.no < 900, `the cards and the whole choice take ${below.no} px`);
      const still = await pageDoesNotScroll(page);
      assert.ok(still.ok, still.detail);
      assert.equal(await strip.getAttribute('tabindex'), '0', 'a keyboard can scroll the row');
      if (process.env.SHOTS_DIR) {
        await choice.getByRole('button', { name: 'No' }).scrollIntoViewIfNeeded();
        await page.screenshot({ path: `${process.env.SHOTS_DIR}/beer-choice-375.png` });
      }
      await choice.getByRole('button', { name: 'No' }).click();
      await choice.waitFor({ state: 'detached' });
    });
  } finally {
    await page.setViewportSize({ width: 1280, height: 860 });
  }
});

test('Stop while the choice waits: the record says the person stopped it (not that they declined), and a "no" after it is a new request', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    const choice = await recommendation(page, 'Stopped taps');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await choice.waitFor({ state: 'detached' });
    const record = page.locator('ol.transcript li').filter({ hasText: 'Would you like details on any of them' }).last();
    await record.getByText(/You stopped this answer, so the confirmation .* was withdrawn/).waitFor();
    assert.doesNotMatch(await record.innerText(), /You declined/);
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');
    await sendMessage(page, 'no');
    await page.locator('ol.transcript > li.msg.assistant').filter({ hasText: 'offline model' }).last().waitFor();
    assert.doesNotMatch(await visibleTranscript(page, { replies: true }), /workflow|That did not work/);
  });
});

test('OpenBreweryDB down: the failure reads as a sentence, and the steps it kept from running show as skipped', async (t) => {
  const { page } = browser;
  breweryDb.failAlways('drop');
  t.after(() => breweryDb.failAlways(undefined));
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app!.baseUrl, TOKEN);
    await startConversation(page, 'beer', 'Taps while the source is down', { client: CLIENT });
    await sendMessage(page, 'Recommend some new breweries for my bar');
    const progress = page.getByRole('region', { name: 'Progress' }).last();
    await progress.getByText('Failed', { exact: true }).waitFor({ timeout: 30_000 });
    await page.locator('ol.transcript > li.msg.assistant').filter({ hasText: 'That did not work' }).last().waitFor();
    // the card says which step failed; why, the result under it says (once: readable-results.test.ts)
    const card = await progress.innerText();
    assert.match(card, /Search: failed/);
    for (const step of ['Presentation', 'Confirmation', 'Summary']) assert.match(card, new RegExp(`${step}: skipped`));
    const shown = await visibleTranscript(page, { replies: true });
    assert.doesNotMatch(shown, /API_ERROR|UND_ERR|ENOTFOUND|is unavailable: OpenBreweryDB|\{"/);
    assert.match(shown, /Could not recommend new breweries for your bar: OpenBreweryDB could not be reached/);
  });
});

test("a conversation's bar is readable by its owner only", async () => {
  const created = await app.call('POST', '/v1/conversations', { token: GUS_GREAT_LAKES, body: { agent: 'beer', title: 'Taps' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const own = await app.call('GET', `/v1/conversations/${created.body.id}/bar`, { token: GUS_GREAT_LAKES });
  assert.equal(own.status, 200);
  assert.deepEqual(own.body, { clientId: 'CLT-XLX836', name: 'Great Lakes Brewing Company', city: 'Cleveland', state: 'Ohio' });
  assert.equal(
    (await app.call('GET', `/v1/conversations/${created.body.id}/bar`, { token: TOKEN })).status,
    404,
    "another user's conversation",
  );
  const support = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal((await app.call('GET', `/v1/conversations/${support.body.id}/bar`)).status, 404, 'not a beer conversation');
});

test('staff choose the bar by name from the bars they may act for; header and tab title name it', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    const allowed = await app.call('GET', '/v1/bars', { token: TOKEN });
    assert.equal(allowed.status, 200);
    await signInByLink(page, app.baseUrl, TOKEN);
    await page.getByLabel('Agent').selectOption('beer');
    const picker = page.getByRole('combobox', { name: 'Bar', exact: true });
    await picker.locator('option', { hasText: 'Great Lakes Brewing Company' }).waitFor({ state: 'attached' });
    // exactly the bars this token may act for, by name with their place, and no id to read
    const options = await picker.locator('option').allInnerTexts();
    assert.equal(options[0], 'Choose a bar…');
    assert.deepEqual(
      options.slice(1),
      allowed.body.bars.map((bar: { name: string; city: string; state: string }) => `${bar.name} — ${bar.city}, ${bar.state}`),
    );
    assert.ok(!options.some((text) => /CLT-/.test(text)));
    assert.match(await page.locator('#new-client-detail').innerText(), /^20 bars you may act for\.$/);

    // by keyboard: focus, type the start of the name (the select's own type-ahead)
    await picker.focus();
    await page.keyboard.type('Great', { delay: 50 });
    assert.equal(await picker.inputValue(), 'CLT-XLX836');
    assert.equal(await page.locator('#new-client-detail').innerText(), 'Cleveland, Ohio · CLT-XLX836');

    await page.getByLabel('Title (optional)').fill('Cleveland taps');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /Cleveland taps/ }).waitFor();
    const id = /\/c\/([^/]+)/.exec(page.url())![1]!;
    await page.locator('.conversation-head').getByText('Great Lakes Brewing Company').waitFor();
    await page.waitForFunction(() => (globalThis as any).document.title.includes('Great Lakes Brewing Company'));
    assert.equal(await page.title(), 'Cleveland taps · Great Lakes Brewing Company — Brigade');

    // and it acts for that bar: its profile is Great Lakes'
    await sendMessage(page, 'my profile');
    await waitFor(async () => {
      const view = await app.call('GET', `/v1/conversations/${id}`, { token: TOKEN });
      return view.body.messages.some((message: any) => message.role === 'tool' && message.result?.client_id === 'CLT-XLX836');
    }, 'the profile tool ran for CLT-XLX836');
  });
});

test('an id that is no bar: refused in a sentence, and the list is one click away', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await page.goto('about:blank');
    await signInByLink(page, app.baseUrl, TOKEN);
    await page.getByLabel('Agent').selectOption('beer');
    await page.getByRole('button', { name: "Type a bar's id instead" }).click();
    const typed = page.getByLabel('Bar id (CLT-…)');
    await typed.fill('CLT-NOPE00');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const alert = page.getByRole('form', { name: 'Start a conversation' }).getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.match(said, /No bar with the id "CLT-NOPE00"\. Pick a bar from the list\.$/);
    assert.doesNotMatch(said, /beer\.customers|client:/);
    assert.equal(await typed.inputValue(), 'CLT-NOPE00', 'what was typed stays');
    await page.getByRole('button', { name: 'Pick the bar from the list instead' }).click();
    await page.getByRole('combobox', { name: 'Bar', exact: true }).waitFor();
  });
});

test("a bar's own token is not asked for a bar: it acts for its own", async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await page.goto('about:blank');
    await signInByLink(page, app.baseUrl, GUS_GREAT_LAKES);
    await page.getByLabel('Agent').selectOption('beer');
    assert.equal(await page.getByLabel(/^Bar/).count(), 0, 'neither a list nor a field for the bar');
    await startConversation(page, 'beer', 'Own taps');
    await page.locator('.conversation-head').getByText('Great Lakes Brewing Company').waitFor();
    await page.waitForFunction(() => (globalThis as any).document.title === 'Own taps · Great Lakes Brewing Company — Brigade');
  });
});

// Last: it empties the bars of this test's database.
test('no bar to list: a sentence says so, and an id can still be typed', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await app.adminQuery('DELETE FROM beer.purchases');
    await app.adminQuery('DELETE FROM beer.customers');
    assert.deepEqual((await app.call('GET', '/v1/bars', { token: TOKEN })).body, { bars: [] });
    // a fresh load: the picker asks for the bars once, when it first shows
    await page.goto('about:blank');
    await signInByLink(page, app.baseUrl, TOKEN);
    await page.getByLabel('Agent').selectOption('beer');
    const typed = page.getByLabel('Bar id (CLT-…)');
    await typed.waitFor();
    assert.equal(await page.locator('#new-client-why').innerText(), "No bars are listed for you. If you know the bar's id, type it here.");
    assert.equal(await typed.getAttribute('aria-describedby'), 'new-client-why');
    assert.equal(await page.getByRole('combobox', { name: 'Bar', exact: true }).count(), 0);
  });
});

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
