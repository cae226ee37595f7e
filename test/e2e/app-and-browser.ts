// The set-up browser test files share: a Brigade (the offline model's, beside the fixture OpenBreweryDB or not,
// or one whose model is the scripted Gemini-wire server of test/support/gemini-app.ts) and Chromium, started
// before the file's tests and stopped after them. `started` is handed the parts once they run, and may start
// more: a file's own `before` at the top level would run at once, not after these.
import { after, before } from 'node:test';
import type { FakeGemini } from '../support/fake-gemini.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { startGeminiApp } from '../support/gemini-app.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, buildWebClient, launchBrowser } from './browser.ts';

export interface OfflineApp {
  app: TestApp;
  browser: Browser;
}

export interface ScriptedApp extends OfflineApp {
  fake: FakeGemini;
}

export interface BreweryApp extends OfflineApp {
  breweryDb: FakeOpenBreweryDb;
}

type AppOptions = Parameters<typeof startTestApp>[0];

/** The offline model's Brigade (`options` as startTestApp takes them) and Chromium. */
export function offlineApp(started: (parts: OfflineApp) => void | Promise<void>, options: AppOptions = {}): void {
  withBrowser(async () => ({ app: await startTestApp(options) }), started);
}

/** The offline model's Brigade against the fixture OpenBreweryDB, beer's "want details?" waiting `confirmation`. */
export function breweryApp(started: (parts: BreweryApp) => void | Promise<void>, confirmation: string): void {
  withBrowser(
    async () => {
      const breweryDb = await startFakeOpenBreweryDb();
      try {
        const env = { OPENBREWERYDB_BASE_URL: breweryDb.baseUrl, BEER_CONFIRMATION_TIMEOUT: confirmation };
        return { breweryDb, app: await startTestApp({ env }) };
      } catch (error) {
        await breweryDb.close();
        throw error;
      }
    },
    started,
    ({ breweryDb }) => breweryDb.close(),
  );
}

/** A Brigade whose model is the scripted Gemini-wire server (the key checked), and Chromium. */
export function scriptedApp(started: (parts: ScriptedApp) => void | Promise<void>): void {
  withBrowser(
    () => startGeminiApp({ checkKey: true }),
    started,
    ({ fake }) => fake.close(),
  );
}

function withBrowser<T extends { app: TestApp }>(
  start: () => Promise<T>,
  started: (parts: T & { browser: Browser }) => void | Promise<void>,
  stop?: (parts: T) => Promise<void>,
): void {
  let parts: (T & { browser: Browser }) | undefined;
  before(async () => {
    await buildWebClient();
    const [app, browser] = await Promise.all([start(), launchBrowser()]);
    parts = { ...app, browser };
    await started(parts);
  });
  after(async () => {
    await parts?.browser.close();
    await parts?.app.stop();
    if (parts) await stop?.(parts);
  });
}
