// The set-up many test files share: a Brigade whose model is the scripted Gemini-wire server (fake-gemini.ts),
// started before the file's tests and stopped after them.
import { after, before } from 'node:test';
import { type FakeGemini, startFakeGemini } from './fake-gemini.ts';
import { type TestApp, startTestApp } from './test-app.ts';

export interface GeminiAppOptions {
  /** the API key the app is given (default test-gemini-key) */
  key?: string;
  /** the fake refuses any other key */
  checkKey?: boolean;
  /** more of the app's settings (MODEL_TIMEOUT, ...) */
  env?: Record<string, string>;
}

export async function startGeminiApp({ key = 'test-gemini-key', checkKey = false, env = {} }: GeminiAppOptions = {}) {
  const fake = await startFakeGemini(checkKey ? { apiKey: key } : {});
  try {
    const app = await startTestApp({ env: { GEMINI_API_KEY: key, GEMINI_BASE_URL: fake.baseUrl, ...env } });
    return { fake, app };
  } catch (error) {
    await fake.close();
    throw error;
  }
}

/**
 * Registers the file's before and after hooks; `started` is handed the parts once they run, and may start more
 * (a file's own `before` at the top level would run at once, not after this one).
 */
export function geminiApp(options: GeminiAppOptions, started: (parts: { fake: FakeGemini; app: TestApp }) => void | Promise<void>): void {
  let parts: { fake: FakeGemini; app: TestApp } | undefined;
  before(async () => {
    parts = await startGeminiApp(options);
    await started(parts);
  });
  after(async () => {
    await parts?.app.stop();
    await parts?.fake.close();
  });
}
