// The sous agent through the web client: the recipe beside the chat with steps marked done from the page,
// a PatchSet in Patch Review Mode (added items new, modified ones edited with the old text at hand, removed
// ones struck where they were, the end state before deciding), accepted; and a PatchSet that expires says why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scriptedApp } from './app-and-browser.ts';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { ALICE, BOB, type TestApp } from '../support/test-app.ts';
import {
  type Browser,
  assertAgentFeature,
  launchBrowser,
  sendMessage,
  signInByLink,
  startConversation,
  visibleTranscript,
  withScreenshot,
  consoleErrorsDuring,
} from './browser.ts';

let fake: FakeGemini;
let app: TestApp;
let browser: Browser;

scriptedApp((parts) => void ({ app, fake, browser } = parts));

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
    const changes = await ingredients.evaluateAll((items) =>
      items.map((li) => [li.getAttribute('data-change'), li.querySelector('ins, del, span:not(.chip):not(.visually-hidden)')?.textContent]),
    );
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
    assert.deepEqual(await steps.evaluateAll((items) => items.map((li) => li.getAttribute('data-change'))), [
      'unchanged',
      'unchanged',
      'modified',
      'unchanged',
      'added',
      'modified',
    ]);
    assert.match(await review.getByRole('region', { name: 'Notes added' }).innerText(), /dairy-free/);
    assert.match(
      await review.locator('.impacted').innerText(),
      /1 ingredient added · 1 ingredient edited · 1 ingredient removed · 1 step added · 2 steps edited/,
    );

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
    await page.locator('.msg.record', { hasText: /No answer in time/ }).waitFor();
  });
});

test('a hard avoid the chef offers to override has its control: allowed for this recipe, end to end', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.getByLabel('Agent').selectOption('sous');
    await page.getByLabel('Never use (comma separated)').fill('peanut, shellfish');
    await page.getByLabel('Title (optional)').fill('No nuts');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
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

test('the changed recipe saved to My recipes as a new recipe beside the one it was cooked from', async (t) => {
  const { page } = browser;
  const consoleErrors = consoleErrorsDuring(t, page);
  // a saved recipe of Alice's, as the recipes agent stores one
  const [original] = await app.adminQuery<{ id: string }>(
    `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, cook_time, servings, tags)
     VALUES (gen_random_uuid(), 'alice', 'Buttered noodles', 'food', $1::jsonb, $2::jsonb, 5, 10, 2, '["quick"]'::jsonb) RETURNING id`,
    [
      JSON.stringify([
        { name: 'egg noodles', quantity: '200', unit: 'g', notes: null },
        { name: 'butter', quantity: '3', unit: 'tbsp', notes: 'soft' },
        { name: 'salt', quantity: '1', unit: 'pinch', notes: null },
      ]),
      JSON.stringify(['Boil the noodles for 6 minutes.', 'Toss them with the butter and the salt.']),
    ],
  );
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.getByRole('link', { name: 'My recipes', exact: true }).click();
    await page
      .locator('.recipe-grid .recipe-card', { hasText: 'Buttered noodles' })
      .getByRole('button', { name: 'Cook it with Sous' })
      .click();
    const side = page.getByRole('complementary', { name: 'Recipe' });
    await side.getByRole('heading', { name: 'Buttered noodles' }).waitFor();
    // nothing accepted yet: nothing new to save
    assert.equal(await side.getByRole('button', { name: 'Save this version to My recipes' }).count(), 0);

    fake.script(
      answer('Olive oil instead of butter, and some parsley.', {
        patchSetId: 'oil',
        patches: [
          { op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil, warmed' },
          { op: 'add_ingredient', text: '1 handful parsley, chopped' },
          { op: 'update_step', step_id: 's2', text: 'Toss them with the olive oil, the parsley and the salt.' },
        ],
        summary: { title: 'Olive oil' },
      }),
    );
    await sendMessage(page, 'use olive oil instead of butter');
    const review = page.getByRole('article', { name: /Review the proposed change: Olive oil/ });
    await review.getByRole('button', { name: 'Accept changes' }).click();
    await side.getByText('3 tbsp olive oil, warmed').waitFor();

    await side.getByRole('button', { name: 'Save this version to My recipes' }).click();
    const saved = side.getByRole('status');
    await saved
      .getByText(
        /Saved version 2 to My recipes as “Buttered noodles \(changed\)”, a new recipe; the recipe you started from is unchanged\./,
      )
      .waitFor();
    assert.equal(await side.getByRole('button', { name: 'Save this version to My recipes' }).count(), 0, 'this version is saved');
    assert.doesNotMatch(await visibleTranscript(page, { replies: true }), /\{"/, 'no JSON in the transcript, replies included');

    await saved.getByRole('link', { name: 'Open “Buttered noodles (changed)” in My recipes' }).click();
    const copy = page.locator('.recipe-grid .recipe-card', {
      has: page.getByRole('heading', { name: 'Buttered noodles (changed)', exact: true }),
    });
    const detail = copy.locator('.recipe-detail');
    await detail.waitFor();
    assert.match(
      await detail.innerText(),
      /200 g egg noodles[\s\S]*3 tbsp olive oil[\s\S]*1 pinch salt[\s\S]*1 handful parsley[\s\S]*Toss them with the olive oil, the parsley and the salt\./,
    );
    assert.doesNotMatch(await detail.innerText(), /butter/);
    assert.match(await copy.innerText(), /food · 5 min prep · 2 servings/);
    // the original is still there, unchanged
    await page.getByRole('heading', { name: 'Buttered noodles', exact: true }).waitFor();
    const kept = await app.call('GET', `/v1/recipes/${original!.id}`);
    assert.deepEqual(
      kept.body.ingredients.map((i: { name: string }) => i.name),
      ['egg noodles', 'butter', 'salt'],
    );

    // the API: the saved copy's fields, and the same content saved again is the same recipe
    const conversationId = (
      await app.adminQuery<{ conversation_id: string }>(
        "SELECT conversation_id FROM saved_recipes WHERE name = 'Buttered noodles (changed)'",
      )
    )[0]!.conversation_id;
    const again = await app.call('POST', `/v1/conversations/${conversationId}/recipe/save`, { body: {} });
    assert.equal(again.status, 200);
    assert.equal(again.body.created, false);
    const stored = await app.call('GET', `/v1/recipes/${again.body.recipeId}`);
    assert.deepEqual(
      {
        type: stored.body.recipe_type,
        tags: stored.body.tags,
        cook: stored.body.cook_time,
        oil: stored.body.ingredients[1],
        image: stored.body.image_url,
      },
      { type: 'food', tags: ['quick'], cook: 10, oil: { name: 'olive oil', quantity: '3', unit: 'tbsp', notes: 'warmed' }, image: null },
    );
    // another user's conversation is not found
    assert.equal((await app.call('POST', `/v1/conversations/${conversationId}/recipe/save`, { token: BOB, body: {} })).status, 404);
    assert.deepEqual(consoleErrors, [], 'no console errors');
  });
});

test('a saved recipe is chosen by name to start cooking, not typed as an id', async (t) => {
  const { page } = browser;
  const consoleErrors = consoleErrorsDuring(t, page);
  await app.adminQuery(
    `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, servings)
     VALUES (gen_random_uuid(), 'alice', 'Tomato soup', 'food', $1::jsonb, $2::jsonb, 3),
            (gen_random_uuid(), 'bob', 'Bob''s secret chili', 'food', $1::jsonb, $2::jsonb, 3)`,
    [
      JSON.stringify([{ name: 'tomatoes', quantity: '6', unit: null, notes: null }]),
      JSON.stringify(['Simmer the tomatoes for 20 minutes.']),
    ],
  );
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.getByLabel('Agent').selectOption('sous');
    const picker = page.getByLabel('Recipe', { exact: true });
    await picker.locator('option', { hasText: 'Tomato soup (food)' }).waitFor({ state: 'attached' });
    const offered = await picker.locator('option').allInnerTexts();
    assert.equal(offered[0], 'The demo recipe (lemon garlic spaghetti)');
    assert.ok(!offered.some((name) => /chili/.test(name)), 'only her own recipes');
    await startConversation(page, 'sous', 'Soup night', { recipe: 'Tomato soup (food)' });
    const side = page.getByRole('complementary', { name: 'Recipe' });
    await side.getByRole('heading', { name: 'Tomato soup' }).waitFor();
    await side.getByText('Simmer the tomatoes for 20 minutes.').waitFor();
    assert.deepEqual(consoleErrors, [], 'no console errors');
  });
});

test('on a phone (375 px) the recipe comes before the chat, and nothing scrolls sideways', async (t) => {
  const phone = await launchBrowser({ width: 375, height: 740 });
  t.after(() => phone.close());
  const { page } = phone;
  const consoleErrors = consoleErrorsDuring(t, page);
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await startConversation(page, 'sous', 'Phone dinner');
    const side = page.getByRole('complementary', { name: 'Recipe' });
    await side.getByRole('heading', { name: 'Lemon garlic spaghetti' }).waitFor();
    fake.script(answer('Want some heat?', CHILI));
    await sendMessage(page, 'add some chili');
    const review = page.getByRole('article', { name: /Review the proposed change: Add some heat/ });
    await review.waitFor();

    // first in the page's order (what a screen reader and the Tab key follow) and first on the screen
    const order = await page.evaluate(() => {
      const d = (globalThis as any).document;
      const panel = d.querySelector('aside.side-panel');
      const chat = d.querySelector('ol.transcript');
      return {
        panelFirst: Boolean(panel.compareDocumentPosition(chat) & 4),
        panelBottom: panel.getBoundingClientRect().bottom,
        chatTop: chat.getBoundingClientRect().top,
        scrollWidth: d.documentElement.scrollWidth,
      };
    });
    assert.ok(order.panelFirst, 'the recipe panel comes before the chat in the document');
    assert.ok(order.panelBottom <= order.chatTop, `the recipe panel is above the chat (${order.panelBottom} > ${order.chatTop})`);
    assert.ok(order.scrollWidth <= 375, `no horizontal scroll (scrollWidth ${order.scrollWidth})`);

    // the panel leads to the review below the chat
    await side.getByRole('button', { name: 'Go to the review' }).click();
    await page.waitForFunction(() => {
      const box = (globalThis as any).document.querySelector('article.patch-review h2').getBoundingClientRect();
      return box.top >= 0 && box.top < (globalThis as any).innerHeight;
    });
    await review.getByRole('button', { name: 'Accept changes' }).click();
    await side.getByText('1 tsp chili flakes').waitFor();
    await side.getByRole('button', { name: 'Save this version to My recipes' }).waitFor();
    assert.ok(
      (await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)) <= 375,
      'no horizontal scroll after accepting',
    );
    assert.deepEqual(consoleErrors, [], 'no console errors');
  });
});
