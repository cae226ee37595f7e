// An MCP server's question (elicitation) in the web client, in Chromium against a real Brigade and a real MCP
// server (test/support/mcp-kitchen.ts, plan_menu): the form shows every type the spec's form schema allows,
// pre-filled with the schema's defaults; an answer Brigade refuses is shown at its fields; the fixed answer
// reaches the server with its JSON types (numbers, booleans, arrays of the chosen values).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type KitchenHttp, startKitchenHttp } from '../support/mcp-kitchen.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { waitUntilIdle } from '../support/scenarios.ts';
import {
  type Browser,
  buildWebClient,
  consoleErrorsDuring,
  launchBrowser,
  sendMessage,
  signInByLink,
  startConversation,
  withScreenshot,
} from './browser.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-question-'));
let fake: FakeGemini;
let kitchen: KitchenHttp;
let app: TestApp;
let browser: Browser;

before(async () => {
  await buildWebClient();
  [fake, kitchen] = await Promise.all([startFakeGemini(), startKitchenHttp()]);
  const configPath = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { kitchen: { url: kitchen.url, agents: ['support'], questionDeadline: '5m' } } }),
  );
  [app, browser] = await Promise.all([
    startTestApp({
      env: { GEMINI_API_KEY: 'mcp-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '10s', BRIGADE_MCP_CONFIG: configPath },
    }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await kitchen?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('an MCP question in the web client', () => {
  test('the form is pre-filled with the defaults, offers titled and multiple choices, and sends typed values', async (t) => {
    const { page } = browser;
    const consoleErrors = consoleErrorsDuring(t, page);
    const answers: Record<string, unknown>[] = [];
    kitchen.hooks.onMenuAnswer = (content) => void answers.push(content);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      const id = await startConversation(page, 'support', 'Birthday dinner');
      fake.script(reply.calls({ name: 'kitchen__plan_menu', args: { occasion: 'birthday' } }));
      await sendMessage(page, 'Plan the birthday dinner');

      const card = page.getByRole('article', { name: 'Tell us about the dinner' });
      await card.waitFor();
      // the schema's defaults, each in its own kind of control
      assert.equal(await card.getByLabel('Guests (required)').inputValue(), '4');
      assert.equal(await card.getByLabel('Guests (required)').getAttribute('type'), 'number');
      assert.equal(await card.getByLabel('Guests (required)').getAttribute('max'), '12');
      assert.equal(await card.getByLabel('Budget per head').inputValue(), '25.5');
      assert.equal(await card.getByLabel('Vegetarian').isChecked(), true);
      const course = card.getByLabel('Course (required)');
      assert.equal(await course.inputValue(), 'main');
      assert.deepEqual(
        await course.locator('option').allTextContents(),
        ['Starter', 'Main course', 'Dessert'],
        'a titled enum shows its titles',
      );
      assert.equal(await card.getByLabel('Cuisine').locator('option:checked').textContent(), 'Italian', 'enumNames label the choices');
      const allergies = card.getByRole('group', { name: /Allergies/ });
      assert.equal(await allergies.getByRole('checkbox', { name: 'Tree nuts' }).isChecked(), true);
      assert.equal(await allergies.getByRole('checkbox', { name: 'Gluten' }).isChecked(), false);
      const extras = card.getByRole('group', { name: /Extras/ });
      assert.equal(await extras.getByRole('checkbox').count(), 3);
      assert.equal(await card.getByLabel('Host').inputValue(), 'Sam');
      assert.equal(await card.getByLabel('Contact email').getAttribute('type'), 'email');
      assert.equal(await card.getByLabel('Day').getAttribute('type'), 'date');

      // too many guests and too many allergies: Brigade refuses, and says so at each field
      await card.getByLabel('Guests (required)').fill('20');
      await allergies.getByRole('checkbox', { name: 'Gluten' }).check();
      await allergies.getByRole('checkbox', { name: 'Dairy' }).check();
      await card.getByRole('button', { name: 'Answer' }).click();
      const guestsError = card.locator('.field.invalid', { has: page.getByLabel('Guests (required)') }).getByRole('alert');
      await guestsError.waitFor();
      assert.match((await guestsError.textContent()) ?? '', /12/);
      assert.match((await allergies.getByRole('alert').textContent()) ?? '', /more than 2 items/);
      assert.equal(answers.length, 0, 'nothing reached the server');

      await card.getByLabel('Guests (required)').fill('2');
      await allergies.getByRole('checkbox', { name: 'Tree nuts' }).uncheck();
      await extras.getByRole('checkbox', { name: 'wine' }).check();
      await card.getByLabel('Vegetarian').uncheck();
      await course.selectOption({ label: 'Dessert' });
      await card.getByLabel('Day').fill('2025-06-01');
      fake.script(reply.text('The menu is planned.'));
      await card.getByRole('button', { name: 'Answer' }).click();
      await page.getByText('The menu is planned.').waitFor();
      await waitUntilIdle(app, id);
      assert.deepEqual(answers, [
        {
          guests: 2,
          budget: 25.5,
          vegetarian: false,
          course: 'dessert',
          cuisine: 'italian',
          allergies: ['gluten', 'dairy'],
          extras: ['wine'],
          host: 'Sam',
          day: '2025-06-01',
        },
      ]);
      assert.deepEqual(
        consoleErrors.filter((e) => !/422/.test(e)),
        [],
      );
    });
  });
});
