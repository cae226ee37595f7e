// An MCP server behind OAuth in the web client (issue 47), in Chromium against a real Brigade and a local tracker
// that is its own authorization server (test/support/mcp-oauth-tracker.ts): before connecting, the agent's answer
// says the tool needs it, with a Connect button; "Connect tracker" in the conversation's header goes to the
// tracker's consent page, back through Brigade's callback to the conversation, and the tool call then works as
// the person; "Disconnect tracker" revokes it, and the next call answers "Connect tracker first".
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../stack/ports.ts';
import { type FakeGemini, endsWithToolResults, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type Tracker, startTracker } from '../support/mcp-oauth-tracker.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
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

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-oauth-web-'));
let fake: FakeGemini;
let tracker: Tracker;
let app: TestApp;
let browser: Browser;

before(async () => {
  await buildWebClient();
  [fake, tracker] = await Promise.all([startFakeGemini(), startTracker()]);
  const configPath = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { tracker: { url: tracker.url, auth: 'oauth', agents: ['support'], approval: 'never' } } }),
  );
  fake.scriptFn((request) => {
    if (endsWithToolResults(request)) return reply.text('Here is what the tracker said.');
    const names = (request.body.tools ?? []).flatMap((tools) => tools.functionDeclarations ?? []).map((declaration) => declaration.name);
    const name = names.find((candidate) => candidate === 'tracker__whoami') ?? names.find((candidate) => candidate === 'tracker__connect');
    return name ? reply.calls({ name, args: {} }) : reply.text('No tracker.');
  });
  // the provider sends the browser back to PUBLIC_URL: the address this page is on, so its session storage is there
  const port = await freePort();
  [app, browser] = await Promise.all([
    startTestApp({
      apiPort: port,
      env: {
        GEMINI_API_KEY: 'oauth-key',
        GEMINI_BASE_URL: fake.baseUrl,
        MODEL_TIMEOUT: '10s',
        BRIGADE_MCP_CONFIG: configPath,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
      },
    }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await tracker?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('an MCP server behind OAuth in the web client', () => {
  test('Connect, consent at the provider, back to the conversation: the call works as the person; Disconnect: it asks to connect again', async (t) => {
    const { page } = browser;
    const consoleErrors = consoleErrorsDuring(t, page);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      const id = await startConversation(page, 'support', 'Tracker tickets');
      const tools = page.getByRole('group', { name: 'Tools to connect' });
      await tools.getByRole('button', { name: 'Connect tracker' }).waitFor();

      // not connected: the answer says so, with the same Connect at hand
      await sendMessage(page, 'Who am I at the tracker?');
      const askToConnect = page.locator('.msg.tool').last();
      await askToConnect
        .locator('.tool-line')
        .getByText(/Connect tracker first/)
        .waitFor();
      await askToConnect.getByRole('button', { name: 'Connect tracker' }).waitFor();

      // Connect: the tracker's consent page, then back to this conversation
      await tools.getByRole('button', { name: 'Connect tracker' }).click();
      await page.waitForURL((url) => url.origin === tracker.origin);
      await page.getByRole('heading', { name: 'Tracker', exact: true }).waitFor();
      await page.getByLabel('Your tracker name').fill('alice-at-tracker');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('status').filter({ hasText: 'Connected tracker.' }).waitFor();
      await page.waitForURL(`${app.baseUrl}/c/${id}`);
      assert.equal(new URL(page.url()).hash, '', 'the code and state leave the address bar');
      await tools.getByRole('button', { name: 'Disconnect tracker' }).waitFor();

      await sendMessage(page, 'And now?');
      await page
        .locator('.msg.tool')
        .last()
        .locator('.tool-line')
        .getByText(/Signed in at the tracker as alice-at-tracker/)
        .waitFor();
      assert.equal(tracker.calls.at(-1)?.subject, 'alice-at-tracker');

      // Disconnect: revoked at the tracker, and the next call asks to connect again
      const grant = tracker.grants.at(-1)!;
      await tools.getByRole('button', { name: 'Disconnect tracker' }).click();
      await tools.getByRole('button', { name: 'Connect tracker' }).waitFor();
      assert.ok(grant.revoked, 'revoked at the tracker');
      await sendMessage(page, 'Once more?');
      await page
        .locator('.msg.tool')
        .nth(2)
        .locator('.tool-line')
        .getByText(/Connect tracker first/)
        .waitFor();
      assert.deepEqual(consoleErrors, []);
    });
  });
});
