// The set-up browser test files share: a Brigade whose model is the scripted Gemini-wire server
// (test/support/gemini-app.ts) and Chromium, started before the file's tests and stopped after them.
import { after, before } from 'node:test';
import type { FakeGemini } from '../support/fake-gemini.ts';
import { startGeminiApp } from '../support/gemini-app.ts';
import type { TestApp } from '../support/test-app.ts';
import { type Browser, buildWebClient, launchBrowser } from './browser.ts';

export interface ScriptedApp {
  app: TestApp;
  fake: FakeGemini;
  browser: Browser;
}

/**
 * Registers the file's before and after hooks; `started` is handed the parts once they run, and may start more
 * (a file's own `before` at the top level would run at once, not after these).
 */
export function scriptedApp(started: (parts: ScriptedApp) => void | Promise<void>): void {
  let parts: Partial<ScriptedApp> = {};
  before(async () => {
    await buildWebClient();
    const [{ fake, app }, browser] = await Promise.all([startGeminiApp({ checkKey: true }), launchBrowser()]);
    parts = { fake, app, browser };
    await started(parts as ScriptedApp);
  });
  after(async () => {
    await parts.browser?.close();
    await parts.app?.stop();
    await parts.fake?.close();
  });
}
