// The sous agent through the web client: the recipe beside the chat with steps marked done from the page,
// a PatchSet in Patch Review Mode (added items new, modified ones edited with the old text at hand, removed
// ones struck where they were, the end state before deciding), accepted; and a PatchSet that expires says why.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, assertAgentFeature, buildWebClient, launchBrowser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';

let fake: FakeGemini;
let app: TestApp;
let browser: Browser;

before(async () => {
  await buildWebClient();
  fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  [app, browser] = await Promise.all([startTestApp({ env: { GEMINI_API_KEY: 'test-gemini-key', GEMINI_BASE_URL: fake.baseUrl } }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await fake?.close();
});

const answer = (assistant_message: string, patchSet: unknown = null) => reply.text(JSON.stringify({ assistant_message, patchSet }));

// Against the demo recipe (Lemon garlic spaghetti: i1..i6, s1..s5).
const OLIVE_OIL = {
  patchSetId: 'olive-oil',
  patches: [
    { op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' },
    { op: 'remove_ingredient', id: 'i5' },
    { op: 'add_ingredient', text: '1 handful parsley, chopped' },
    { op: 'update_step', step_id: 's3', text: 'Warm the olive oil in a pan over low heat and soften the garlic for 1 minute.' },
    { op: 'add_step', after_step_id: 's4', text: 'Scatter the parsley over the pasta.' },
    { op: 'update_step', step_id: 's5', text: 'Serve with a pinch of salt.' },
    { op: 'add_note', text: 'Olive oil instead of butter keeps it dairy-free.' },
  ],
  summary: { title: 'Dairy-free', bullets: ['butter → olive oil', 'no parmesan; parsley instead'] },
};
const CHILI = {
  patchSetId: 'chili',
  patches: [{ op: 'add_ingredient', text: '1 tsp chili flakes' }],
  summary: { title: 'Add some heat' },
};

test('a PatchSet reviewed in place and accepted; steps marked done; an expired PatchSet says why', async (t) => {
  await assertAgentFeature(app.baseUrl, ALICE, 'sous', 'a recipe state (stateful)', (info) => info.stateful === true);
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await startConversation(page, 'sous', 'Dinner');

    const side = page.getByRole('complementary', { name: 'Recipe' });
    await side.getByRole('heading', { name: 'Lemon garlic spaghetti' }).waitFor();
    assert.match(await side.innerText(), /version 1/);
    await side.getByRole('button', { name: /Mark step s1 done/ }).click();
    await side.locator('li.done[data-step-id="s1"]').waitFor();
    await side.getByText(/version 2/).waitFor();

    fake.script(answer('Here is a dairy-free version for you to review.', OLIVE_OIL));
    await sendMessage(page, 'make it dairy-free');
    const review = page.getByRole('article', { name: /Review the proposed change: Dairy-free/ });
    await review.waitFor();

    const ingredients = review.getByRole('region', { name: 'Ingredients (review)' }).locator('li.review-entry');
    const changes = await ingredients.evaluateAll((items) => items.map((li) => [li.getAttribute('data-change'), li.querySelector('ins, del, span:not(.chip):not(.visually-hidden)')?.textContent]));
    assert.deepEqual(changes, [
      ['unchanged', '200 g spaghetti'],
      ['modified', '3 tbsp olive oil'],
      ['unchanged', '2 cloves garlic, minced'],
      ['unchanged', '1 lemon, zested and juiced'],
      ['removed', 'removed: 40 g parmesan, grated'],
      ['unchanged', '1 pinch salt'],
      ['added', 'added: 1 handful parsley, chopped'],
    ]);
    // removed: a struck ghost in its place; added: marked new; modified: marked edited, the old text at hand
    assert.equal(await ingredients.nth(4).locator('del').count(), 1);
    assert.match(await ingredients.nth(6).locator('.chip').innerText(), /new/);
    const modified = ingredients.nth(1);
    assert.match(await modified.locator('.chip').innerText(), /edited/);
    await modified.getByRole('button', { name: 'show the old text' }).click();
    assert.match(await modified.locator('.old-text').innerText(), /was: 3 tbsp butter/);

    const steps = review.getByRole('region', { name: 'Steps (review)' }).locator('li.review-entry');
    assert.deepEqual(await steps.evaluateAll((items) => items.map((li) => li.getAttribute('data-change'))), ['unchanged', 'unchanged', 'modified', 'unchanged', 'added', 'modified']);
    assert.match(await review.getByRole('region', { name: 'Notes added' }).innerText(), /dairy-free/);
    assert.match(await review.locator('.impacted').innerText(), /1 ingredients added · 1 ingredients edited · 1 ingredients removed · 1 steps added · 2 steps edited/);

    // the whole end state before deciding
    await review.getByRole('tab', { name: 'Recipe after accepting' }).click();
    const end = await review.locator('.end-state').innerText();
    assert.match(end, /1 handful parsley, chopped/);
    assert.doesNotMatch(end, /parmesan/);
    assert.match(end, /Scatter the parsley over the pasta\./);

    await review.getByRole('button', { name: 'Accept changes' }).click();
    await review.waitFor({ state: 'detached' });
    await side.getByText('3 tbsp olive oil').waitFor();
    assert.doesNotMatch(await side.innerText(), /parmesan/);
    await side.getByText(/version 3/).waitFor();
    await page.locator('.msg.record', { hasText: /You accepted: the proposed change/ }).waitFor();

    // a PatchSet waiting while a step is marked done no longer fits, expires, and the page says why
    fake.script(answer('Want some heat?', CHILI));
    await sendMessage(page, 'add some chili');
    const second = page.getByRole('article', { name: /Review the proposed change: Add some heat/ });
    await second.waitFor();
    await side.getByRole('button', { name: /Mark step s2 done/ }).click();
    await second.waitFor({ state: 'detached' });
    await page.getByText(/no longer fits the recipe and has expired/).waitFor();
    await page.locator(".msg.record", { hasText: /No answer in time/ }).waitFor();
  });
});

test('a hard avoid the chef offers to override has its control: allowed for this recipe, end to end', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.getByLabel('Agent').selectOption('sous');
    await page.getByLabel('Never use (comma separated)').fill('peanut, shellfish');
    await page.getByLabel('Title (optional)').fill('No nuts');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByRole('heading', { level: 1, name: /No nuts/ }).waitFor();
    const id = /\/c\/([^/]+)/.exec(page.url())![1]!;

    const side = page.getByRole('complementary', { name: 'Recipe' });
    const defaults = side.getByRole('region', { name: 'Your defaults' });
    await defaults.getByText('Never use:').waitFor();
    assert.doesNotMatch(await side.innerText(), /hardAvoids/, 'no internal field names');
    const allow = defaults.getByRole('button', { name: 'Allow peanut for this recipe' });
    await allow.focus();
    await page.keyboard.press('Enter');
    await defaults.getByText('allowed for this recipe').waitFor();
    await defaults.getByRole('button', { name: 'Allow shellfish for this recipe' }).waitFor();
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(view.body.hardAvoidOverrides, ['peanut']);
  });
});
