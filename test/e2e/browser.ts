// End-to-end harness: Debian's Chromium driven by playwright-core against a real Brigade (startTestApp)
// serving the built web client, a screenshot into test-results/<file>/ when a test fails, and a loopback
// proxy that can cut the event streams to show that the client resumes them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ensureWebBuild } from '../../stack/web-build.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const RESULTS = path.resolve(import.meta.dirname, '../../test-results');

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Builds the web client if its build is stale, so the tests never run against an old one. */
export async function buildWebClient(): Promise<void> {
  await ensureWebBuild();
}

export async function launchBrowser(options: { width?: number; height?: number } = {}): Promise<Browser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      // Leave the app first, so the server ends its event streams (and releases their database
      // connections) before the test app drops its database.
      await page.goto('about:blank').catch(() => undefined);
      await context.close().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Runs a test's body; when it fails, a screenshot of the page goes to test-results/<file>/<test>.png. */
/** The page's console errors from now until the test ends (the page is shared by a file's tests). */
export function consoleErrorsDuring(t: TestContext, page: Page): string[] {
  const errors: string[] = [];
  const onConsole = (message: { type(): string; text(): string }) => void (message.type() === 'error' && errors.push(message.text()));
  page.on('console', onConsole);
  t.after(() => void page.off('console', onConsole));
  return errors;
}

export async function withScreenshot(t: TestContext, file: string, page: Page, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    const dir = path.join(RESULTS, path.basename(file).replace(/\.test\.ts$/, ''));
    fs.mkdirSync(dir, { recursive: true });
    const shot = path.join(dir, `${t.name.replace(/[^\w.-]+/g, '-').slice(0, 100)}.png`);
    await page.screenshot({ path: shot, fullPage: true }).catch(() => undefined);
    t.diagnostic(`screenshot: ${shot}`);
    throw error;
  }
}

/** Signs in through the dev sign-in link (the token in the fragment) and waits for the app. */
export async function signInByLink(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/#token=${token}`);
  // on a phone the account is in the menu's drawer, closed: there, not necessarily in view
  await page.getByText('Signed in as').waitFor({ state: 'attached' });
}

/**
 * Starts a conversation from the sidebar form and waits for its page; `client` is a bar's id, chosen from the
 * beer picker, `recipe` a saved recipe's name, chosen from the sous picker.
 */
export async function startConversation(
  page: Page,
  agent: string,
  title: string,
  extra: { client?: string; recipe?: string } = {},
): Promise<string> {
  await openHome(page);
  const form = page.getByRole('form', { name: 'Start a conversation' });
  await form.getByLabel('Agent').selectOption(agent);
  if (extra.client) await form.getByLabel('Bar', { exact: true }).selectOption(extra.client);
  if (extra.recipe) await form.getByLabel('Recipe', { exact: true }).selectOption({ label: extra.recipe });
  await form.getByLabel('Title (optional)').fill(title);
  await form.getByRole('button', { name: 'Start', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: new RegExp(title) }).waitFor();
  const id = /\/c\/([^/]+)/.exec(page.url())?.[1];
  if (!id) throw new Error(`no conversation in ${page.url()}`);
  return id;
}

/** The home page (the agents' tiles and the start form), from wherever the app is, as the brand link does. */
export async function openHome(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Brigade', exact: true }).click();
  await page.getByRole('form', { name: 'Start a conversation' }).waitFor();
}

export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
}

/**
 * A TCP proxy on loopback in front of the API. `cutEventStreams()` destroys the connections that carry
 * GET .../events (the browser sees the stream drop); other requests are left alone.
 */
export interface CuttingProxy {
  url: string;
  /** Last-Event-ID headers the event stream requests carried, in order ('' when none) */
  lastEventIds: string[];
  cutEventStreams(): number;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const streams = new Set<net.Socket>();
  const all = new Set<net.Socket>();
  const lastEventIds: string[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    all.add(client);
    client.on('data', (chunk: Buffer) => {
      const head = chunk.toString('latin1');
      if (/^GET \/v1\/conversations\/[^ ]+\/events /m.test(head)) {
        streams.add(client);
        lastEventIds.push(/^last-event-id:\s*(\S*)/im.exec(head)?.[1] ?? '');
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      streams.delete(client);
      all.delete(client);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    lastEventIds,
    cutEventStreams() {
      const count = streams.size;
      for (const socket of streams) socket.destroy();
      streams.clear();
      return count;
    },
    async close() {
      for (const socket of all) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Asserts, from GET /v1/meta, that this build serves an agent with the feature its e2e test exercises: a
 * missing agent or feature fails the test (with what /v1/meta did list) rather than skipping it.
 */
export async function assertAgentFeature(
  baseUrl: string,
  token: string,
  agent: string,
  feature: string,
  has: (info: { tools: { name: string }[]; stateful?: boolean }) => boolean,
): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/meta`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200, `GET /v1/meta answered ${response.status}`);
  const meta = (await response.json()) as { agents: { name: string; tools: { name: string }[]; stateful?: boolean }[] };
  const info = meta.agents.find((a) => a.name === agent);
  assert.ok(info, `GET /v1/meta lists no ${agent} agent (it lists: ${meta.agents.map((a) => a.name).join(', ') || 'none'})`);
  assert.ok(
    has(info),
    `the ${agent} agent in GET /v1/meta lacks ${feature} (its tools: ${info.tools.map((t) => t.name).join(', ') || 'none'}; stateful: ${info.stateful})`,
  );
}

/** The page itself does not scroll: only the transcript (or a page's own content) does. */
export async function pageDoesNotScroll(page: Page): Promise<{ ok: boolean; detail: string }> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document.documentElement;
    const body = (globalThis as any).document.body;
    const win = globalThis as any;
    const ok =
      doc.scrollHeight <= win.innerHeight + 1 &&
      doc.scrollWidth <= win.innerWidth + 1 &&
      win.scrollY === 0 &&
      body.scrollHeight <= win.innerHeight + 1;
    return {
      ok,
      detail: `document ${doc.scrollWidth}×${doc.scrollHeight}, body height ${body.scrollHeight}, viewport ${win.innerWidth}×${win.innerHeight}, scrollY ${win.scrollY}`,
    };
  });
}

/**
 * Whether the element is wholly in the viewport and above the sticky composer (the composer never covers it).
 * Returns the rectangles too, for the assertion's message.
 */
export async function fullyInViewAboveComposer(locator: import('playwright-core').Locator): Promise<{ ok: boolean; detail: string }> {
  return locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const composer = (globalThis as any).document.querySelector('form.composer')?.getBoundingClientRect();
    const limit = Math.min((globalThis as any).innerHeight, composer ? composer.top : (globalThis as any).innerHeight);
    // within the transcript's scroller too: nothing hides under the conversation's header
    const scroller = el.closest('.scroller')?.getBoundingClientRect();
    const top = scroller ? Math.max(0, scroller.top) : 0;
    const ok = box.top >= top - 1 && box.bottom <= limit + 1 && box.height > 0;
    return {
      ok,
      detail: `element ${Math.round(box.top)}..${Math.round(box.bottom)}, visible ${Math.round(top)}..${Math.round(limit)}, viewport ${(globalThis as any).innerHeight}`,
    };
  });
}

/**
 * The visible text of what the client words in the transcript (tool calls and results, decisions, progress;
 * collapsed details excluded, as a person sees it), or with `replies` the agent's replies too.
 */
export async function visibleTranscript(page: Page, { replies = false } = {}): Promise<string> {
  const client = 'ol.transcript .tool-call, ol.transcript .msg.tool, ol.transcript .msg.record, ol.transcript .progress';
  const parts = await page.locator(replies ? `ol.transcript .msg.assistant > .md, ${client}` : client).allInnerTexts();
  return parts.join('\n');
}
