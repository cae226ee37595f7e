// An empty sous conversation offers first messages that fit the recipe the person chose: a saved Old Fashioned is offered its bourbon swapped and its garnish left out, not the demo
// spaghetti's parmesan; a suggestion goes into the message box and, sent, proposes a change. At 1280 and 375 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;
offlineApp(async (parts) => {
  ({ app, browser } = parts);
  await app.adminQuery(
    `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, servings, tags)
     VALUES ($1, 'alice', 'Old Fashioned', 'cocktail', $2::jsonb, $3::jsonb, 5, 1, '[]'::jsonb)`,
    [
      randomUUID(),
      JSON.stringify([
        { name: 'bourbon', quantity: '2', unit: 'oz', notes: null },
        { name: 'sugar cube', quantity: '1', unit: null, notes: null },
        { name: 'orange peel', quantity: null, unit: null, notes: null },
      ]),
      JSON.stringify(['Muddle the sugar.', 'Add the bourbon and ice, and stir.', 'Garnish with the orange peel.']),
    ],
  );
});

for (const width of [1280, 375] as const) {
  test(`at ${width} px a saved cocktail is offered what fits it, and a suggestion sent proposes a change`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'sous', `Old Fashioned ${width}`, { recipe: 'Old Fashioned (cocktail)' });
      const examples = page.getByRole('region', { name: /Not sure where to start/ });
      await examples.waitFor();
      assert.deepEqual(await examples.getByRole('button').allInnerTexts(), [
        'swap bourbon for rye',
        'make it for 4',
        'remove the orange peel',
        'add a note: taste before serving',
      ]);
      if (process.env.SHOTS_DIR) await page.screenshot({ path: `${process.env.SHOTS_DIR}/sous-examples-${width}.png` });

      await examples.getByRole('button', { name: 'swap bourbon for rye' }).click();
      assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), 'swap bourbon for rye');
      await sendMessage(page, 'swap bourbon for rye');
      await page.getByRole('article', { name: /Review the proposed change: Swap bourbon for rye/ }).waitFor();
      assert.equal(await examples.count(), 0, 'the suggestions go once the conversation has begun');
    });
  });
}
