// Issue 17, item 1, in real Chromium: a saved recipe whose image_url points at another host (as SQL a model
// wrote could once make it: another port of 127.0.0.1, a protocol-relative //host, a /\host path) must not
// carry the user's bearer token there. A server on another port records every request it gets; opening
// My recipes sends it nothing, those recipes show "no image", the app's own image still loads, and the
// page's Content-Security-Policy makes the browser refuse an off-origin image outright.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { recipeImageKey } from '../../src/agents/recipes/image-keys.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { freePort } from '../../stack/ports.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { PNG_SIGNATURE } from '../support/recipes.ts';
import { type Browser, buildWebClient, launchBrowser, signInByLink, withScreenshot } from './browser.ts';

// a 1x1 PNG
// The page's document, as the functions that run in Chromium see it (this project's types are Node's).
interface PageImage {
  alt: string;
  complete: boolean;
  naturalWidth: number;
  src: string;
}
interface PageDocument {
  images: Iterable<PageImage>;
  body: { append(node: PageImage): void };
  createElement(tag: 'img'): PageImage;
  addEventListener(
    type: 'securitypolicyviolation',
    listener: (event: { violatedDirective: string }) => void,
    options: { once: boolean },
  ): void;
}
declare const document: PageDocument;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let app: TestApp;
let browser: Browser;
let dataDir: string;
let recorder: http.Server;
let recorderPort: number;
const received: { url: string; headers: http.IncomingHttpHeaders }[] = [];

before(async () => {
  assert.ok(PNG.subarray(0, 8).equals(PNG_SIGNATURE));
  await buildWebClient();
  recorder = http.createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
  recorderPort = (recorder.address() as AddressInfo).port;
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-e2e-image-token-'));
  [app, browser] = await Promise.all([
    startTestApp({ apiPort: await freePort(), env: { DATA_DIR: dataDir }, worker: false }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await new Promise((resolve) => recorder?.close(resolve));
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

async function saveRecipe(name: string, imageUrl: string | null, id = randomUUID()): Promise<string> {
  await app.adminQuery("INSERT INTO saved_recipes (id, user_id, name, recipe_type, image_url) VALUES ($1, 'alice', $2, 'cocktail', $3)", [
    id,
    name,
    imageUrl,
  ]);
  return id;
}

test("an image_url on another host never gets the user's token, and the page refuses off-origin images", async (t) => {
  const { page } = browser;
  const hostile = [
    ['Another port', `http://127.0.0.1:${recorderPort}/another-port.png`],
    ['Protocol relative', `//127.0.0.1:${recorderPort}/protocol-relative.png`],
    ['Backslash path', `/\\127.0.0.1:${recorderPort}/backslash.png`],
    ['Page origin as a prefix', `${app.baseUrl}.evil.example/x.png`],
  ] as const;
  for (const [name, url] of hostile) await saveRecipe(name, url);
  // the app's own image: written where the local store keeps it, at the address the store gives it
  const ownId = randomUUID();
  const store = createObjectStore(app.config);
  await store.put(recipeImageKey(ownId), PNG, 'image/png');
  await saveRecipe('Own image', store.publicUrl(recipeImageKey(ownId)), ownId);

  // every request the page makes that carries the token
  const authorized: string[] = [];
  page.on('request', (request) => {
    if (request.headers().authorization) authorized.push(request.url());
  });
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });

  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await page.getByRole('link', { name: 'My recipes', exact: true }).click();
    for (const [name] of hostile) {
      await page.getByRole('img', { name: `Photo of ${name} (no image)` }).waitFor();
    }
    const own = page.getByRole('img', { name: 'Photo of Own image' });
    await own.waitFor();
    await page.waitForFunction(() =>
      [...document.images].some((image) => image.alt === 'Photo of Own image' && image.complete && image.naturalWidth === 1),
    );

    // The browser's own refusal, whatever the app's checks: an image added to the page by script.
    const refused = await page.evaluate(async (url) => {
      const violation = new Promise<string>((resolve) =>
        document.addEventListener('securitypolicyviolation', (event) => resolve(event.violatedDirective), { once: true }),
      );
      const image = document.createElement('img');
      image.src = url;
      document.body.append(image);
      return Promise.race([violation, new Promise<string>((resolve) => setTimeout(() => resolve('no violation'), 3_000))]);
    }, `http://127.0.0.1:${recorderPort}/injected.png`);
    assert.match(refused, /^img-src/);
    await page.waitForTimeout(300);
  });

  assert.deepEqual(received, [], 'the other host received nothing at all');
  assert.ok(authorized.length > 0, 'the API calls carry the token');
  for (const url of authorized) {
    const parsed = new URL(url);
    assert.equal(parsed.origin, new URL(app.baseUrl).origin, `the token went to ${url}`);
    assert.match(parsed.pathname, /^\/v1\//, `the token went to ${url}`);
  }
  assert.ok(violations.length > 0, 'the console reports the refused image');
});
