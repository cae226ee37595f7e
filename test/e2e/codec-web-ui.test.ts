// Issues 35 and 42, in real Chromium: the real Temporal Web UI (the ui-server the cluster shape runs, the same
// server and assets as the dev server's UI) asks Brigade's codec server to decode a support conversation. The
// codec server takes no cookie any more (the web sign-in's cookie reaches every port of the host, and the
// Origin header is anyone's to write): a UI that sends the browser's cookies ("include cross-origin
// credentials") shows ciphertext even to an operator signed in to Brigade's web app, and the codec server
// answered 401. The cluster's UI config passes the UI's own access token instead, which the codec server takes
// like any bearer token of the operator role (shown here as the UI sends it: a bearer token from its origin).
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Page, Response } from 'playwright-core';
import { freePort } from '../../stack/ports.ts';
import { CLUSTER_BINARIES } from '../../stack/temporal-server-binary.ts';
import { brigadeCacheDir } from '../../stack/temporal-binary.ts';
import { uiServerConfig, uiServerProcess } from '../../stack/ui-server.ts';
import type { ManagedProcess } from '../../stack/cluster-process.ts';
import { temporalAddress } from '../support/harness.ts';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, type TestProvider, startTestProvider } from '../support/oidc-provider.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { type Browser, buildWebClient, launchBrowser, withScreenshot } from './browser.ts';

declare const localStorage: { setItem(key: string, value: string): void; clear(): void };

const EMAIL = 'priya@candy.com';
const NAME = 'Priya Patel';

let provider: TestProvider;
let app: TestApp;
let tmp: string;
let binary: string;
let uiPort: number;
let ui: ManagedProcess | undefined;
let uiUrl: string;
let workflowId: string;

/** The Web UI on the one origin the API allows (TEMPORAL_UI_URL), with the cluster's codec settings or none. */
async function startUi(codecEndpoint: string | undefined): Promise<void> {
  await ui?.stop();
  const started = await uiServerProcess({
    binary,
    dir: path.join(tmp, codecEndpoint ? 'configured' : 'plain'),
    port: uiPort,
    temporalAddress: temporalAddress(),
    namespace: 'default',
    codecEndpoint,
  });
  await started.process.start();
  ui = started.process;
  uiUrl = started.url;
}

before(async () => {
  await buildWebClient();
  binary = path.join(brigadeCacheDir(), 'bin', CLUSTER_BINARIES.ui.name);
  await fs.access(binary).catch(() => {
    throw new Error(`${binary} is missing: npm run cluster builds it (stack/temporal-server-binary.ts)`);
  });
  const apiPort = await freePort();
  uiPort = await freePort();
  provider = await startTestProvider({
    redirectUris: [`http://127.0.0.1:${apiPort}/auth/callback`],
    accounts: { ana: { roles: ['operator'], name: 'Ana' }, olga: { roles: ['support'], name: 'Olga' } },
  });
  app = await startTestApp({
    apiPort,
    env: {
      AUTH_OIDC_ISSUER: provider.issuer,
      AUTH_OIDC_AUDIENCE: AUDIENCE,
      AUTH_OIDC_CLIENT_ID: CLIENT_ID,
      AUTH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      AUTH_OIDC_AUDIENCE_PARAM: 'resource',
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: Buffer.alloc(32, 7).toString('base64') }),
      PAYLOAD_ENCRYPTION_KEY_ID: 'k1',
      TEMPORAL_UI_URL: `http://127.0.0.1:${uiPort}`,
    },
  });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-ui-'));

  // a support lookup by someone else: the operator reads it afterwards
  const created = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'support', title: `Help for ${NAME}` } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, {
    token: ALICE,
    body: { text: 'Show me everything about customer priya123' },
  });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  workflowId = created.body.workflowId;
});
after(async () => {
  await ui?.stop();
  await app?.stop();
  await provider?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

async function signIn(page: Page, login: string): Promise<void> {
  await page.goto(`${app.baseUrl}/`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByText('Signed in as').waitFor();
}

/**
 * Opens the workflow's page in the Web UI with the lookup's event group open, and answers what the page shows
 * once its payloads went through the codec server: `shows` is a text it waits for (decoded); without it, the
 * page is read once the codec server refused and the UI says so. Also the statuses the codec server answered.
 */
async function workflowPage(page: Page, ui: string, shows?: string): Promise<{ text: string; statuses: number[] }> {
  const statuses: number[] = [];
  const onResponse = (response: Response) => {
    if (response.url().startsWith(`${app.baseUrl}/codec/decode`) && response.request().method() === 'POST')
      statuses.push(response.status());
  };
  page.on('response', onResponse);
  try {
    await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
    await page.getByText(workflowId).first().waitFor();
    // the lookup's result is the model step's: open its event group in the history
    await page
      .getByText(/^modelStep/)
      .first()
      .click();
    await page
      .getByText(shows ?? 'Decoding failed')
      .first()
      .waitFor();
    return { text: await page.locator('body').innerText(), statuses };
  } finally {
    page.off('response', onResponse);
  }
}

async function withBrowser(t: Parameters<typeof withScreenshot>[0], body: (browser: Browser) => Promise<void>): Promise<void> {
  const browser = await launchBrowser();
  try {
    await withScreenshot(t, import.meta.filename, browser.page, () => body(browser));
  } finally {
    await browser.close();
  }
}

test("a Web UI sending the browser's cookies (as the dev server's, set per browser) decodes nothing, even for an operator signed in to Brigade", async (t) => {
  await startUi(undefined);
  await withBrowser(t, async ({ context, page }) => {
    // the data encoder settings, once per browser: the endpoint with "include cross-origin credentials"
    await page.goto(`${uiUrl}/namespaces/default/workflows`);
    await page.getByRole('button', { name: 'Configure Codec Server' }).click();
    await page.getByRole('button', { name: 'Use Cluster-level setting, where available.' }).click();
    await page.getByLabel('Use my browser setting and ignore Cluster-level setting.').check();
    await page.getByPlaceholder('Paste your endpoint here').fill(`${app.baseUrl}/codec`);
    // the settings open above the UI's sticky top bar, which covers their lower part: the keyboard reaches it
    const credentials = page.getByRole('switch', { name: 'Include cross-origin credentials' });
    await credentials.press('Space');
    assert.equal(await credentials.isChecked(), true);
    await page.getByRole('button', { name: 'Apply' }).press('Enter');

    // The preflight allows no credentials, so the browser does not even send the POST with cookies (no status
    // to see); any that got through would be 401. The page says decoding failed and shows ciphertext.
    const nobody = await workflowPage(page, uiUrl);
    assert.ok(!nobody.text.includes(EMAIL) && !nobody.text.includes(NAME), 'nobody signed in: ciphertext only');
    assert.ok(
      nobody.statuses.every((status) => status === 401),
      `codec server: ${nobody.statuses}`,
    );

    await signIn(page, 'ana');
    const operator = await workflowPage(page, uiUrl);
    assert.ok(!operator.text.includes(EMAIL) && !operator.text.includes(NAME), "the operator's cookie opens nothing");
    assert.ok(
      operator.statuses.every((status) => status === 401),
      `codec server: ${operator.statuses}`,
    );

    // replayed from outside the browser with the UI's Origin and a JSON body: still 401, and no credentials CORS
    const cookie = (await context.cookies(app.baseUrl)).find((c) => c.name.endsWith('brigade_session'))!;
    const fromUi = await fetch(`${app.baseUrl}/codec/decode`, {
      method: 'POST',
      headers: { cookie: `${cookie.name}=${cookie.value}`, 'content-type': 'application/json', origin: uiUrl },
      body: '{"payloads":[]}',
    });
    assert.equal(fromUi.status, 401);
    assert.equal(fromUi.headers.get('access-control-allow-origin'), uiUrl);
    assert.equal(fromUi.headers.get('access-control-allow-credentials'), null);
    const preflight = await fetch(`${app.baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: uiUrl,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-namespace',
      },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), uiUrl, 'the exact origin, never *');
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
  });
});

test("the cluster's Web UI passes its own access token, which the codec server takes from an operator and from nobody else", async () => {
  const config = uiServerConfig({
    port: uiPort,
    temporalAddress: temporalAddress(),
    namespace: 'default',
    codecEndpoint: `${app.baseUrl}/codec`,
  });
  assert.match(config, /passAccessToken: true/);
  assert.match(config, /includeCredentials: false/);
  // what the UI sends with passAccessToken: its access token from the same provider, from its origin
  const decode = async (login: string) => {
    const { accessToken } = await provider.signIn(login);
    return fetch(`${app.baseUrl}/codec/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', origin: uiUrl, 'x-namespace': 'default' },
      body: '{"payloads":[]}',
    });
  };
  const operator = await decode('ana');
  assert.equal(operator.status, 200);
  assert.equal(operator.headers.get('access-control-allow-origin'), uiUrl);
  assert.equal((await decode('olga')).status, 403, 'without the operator role');
});
