// Replies people can read (issue 46, item 5), in real Chromium against a scripted Gemini: a reply's Markdown
// renders as its elements (a list, a table, a code block), a draft renders while it streams, and a reply's
// HTML is text that runs nothing, at 1280 and 375 px. The dark theme's cache chips are readable (4.5:1).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scriptedApp } from './app-and-browser.ts';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, pageDoesNotScroll, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';

let app: TestApp;
let fake: FakeGemini;
let browser: Browser;

scriptedApp((parts) => void ({ app, fake, browser } = parts));

const REPLY = [
  'Here is what I found:',
  '',
  '1. **Ale** is light',
  '2. *Stout* is dark',
  '   - roasted',
  '   - creamy',
  '',
  '| Beer | ABV | Notes |',
  '|------|----:|-------|',
  '| Ale | 4.5 | a long note that makes this table wider than a phone is, to see that it scrolls in its bubble |',
  '| Stout | 6.0 | `dark` |',
  '',
  '```sql',
  'SELECT name FROM beers WHERE abv > 5;',
  '```',
  '',
  'A picture: <img src=x onerror="window.__pwned = 1"> and [a trap](javascript:window.__pwned=2) and <script>window.__pwned = 3</script>',
].join('\n');

for (const width of [1280, 375] as const) {
  test(`at ${width} px a reply's list, table and code render as such, and its HTML is text that runs nothing`, async (t) => {
    const { page } = browser;
    await page.setViewportSize({ width, height: width === 1280 ? 860 : 740 });
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await startConversation(page, 'support', `Markdown ${width}`);
      fake.script(reply.text(REPLY));
      await sendMessage(page, 'What beers are there?');
      const answer = page.locator('.msg.assistant:not(.streaming)', { hasText: 'Here is what I found' });
      await answer.waitFor();

      const items = answer.locator('ol > li');
      assert.equal(await items.count(), 2);
      assert.equal(await items.nth(0).locator('strong').innerText(), 'Ale');
      assert.deepEqual(await items.nth(1).locator('ul > li').allInnerTexts(), ['roasted', 'creamy']);
      assert.deepEqual(await answer.locator('table th').allInnerTexts(), ['Beer', 'ABV', 'Notes']);
      assert.deepEqual(
        await answer
          .locator('table tbody tr')
          .first()
          .locator('td')
          .allInnerTexts()
          .then((c) => c.slice(0, 2)),
        ['Ale', '4.5'],
      );
      assert.equal(await answer.locator('table td code').innerText(), 'dark');
      assert.equal(await answer.locator('pre code').innerText(), 'SELECT name FROM beers WHERE abv > 5;');

      // the HTML is on screen as its text, and nothing of it ran or became an element
      await answer.getByText('<img src=x onerror="window.__pwned = 1">', { exact: false }).waitFor();
      await answer.getByText('<script>window.__pwned = 3</script>', { exact: false }).waitFor();
      assert.equal(await answer.locator('img, script').count(), 0);
      assert.equal(await answer.locator('a').count(), 0, 'a javascript: link is its words only');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await page.evaluate(() => (globalThis as any).__pwned), undefined);

      // a wide table scrolls inside the reply; the page itself does not scroll sideways
      const still = await pageDoesNotScroll(page);
      assert.ok(still.ok, still.detail);
    });
  });
}

test('a draft renders its Markdown while it streams: a list and an unfinished code block', async (t) => {
  const { page } = browser;
  await page.setViewportSize({ width: 1280, height: 860 });
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    await startConversation(page, 'support', 'Streaming Markdown');
    fake.script(reply.text(['Steps:\n\n- first\n- second\n\n```\nline one', '\nline two', '\n```\nAll done.'], { intervalMs: 1_500 }));
    await sendMessage(page, 'Show me the steps');
    const draft = page.locator('.msg.streaming');
    await draft.locator('ul > li', { hasText: 'second' }).waitFor();
    await draft.locator('pre code', { hasText: 'line one' }).waitFor();
    assert.equal(await page.locator('.msg.assistant:not(.streaming)', { hasText: 'All done.' }).count(), 0, 'still streaming');
    const answer = page.locator('.msg.assistant:not(.streaming)', { hasText: 'All done.' });
    await answer.waitFor();
    assert.equal(await answer.locator('pre code').innerText(), 'line one\nline two');
  });
});

/** WCAG's contrast ratio of two computed rgb() colours. */
function contrast(a: string, b: string): number {
  const luminance = (rgb: string) => {
    const [r, g, bl] = rgb
      .match(/[\d.]+/g)!
      .slice(0, 3)
      .map((v) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

test('the cache chips (fresh, cached, stale) read at 4.5:1 or more in the light and the dark theme', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      // the chip as a result card shows it (ResultExtras.tsx), styled by the page's own stylesheet
      const colours = await page.evaluate(() => {
        const doc = (globalThis as any).document;
        return ['cache_miss', 'cache_hit', 'cache_stale'].map((state) => {
          const chip = doc.createElement('span');
          chip.className = `chip cache ${state}`;
          chip.textContent = state;
          doc.querySelector('#root').appendChild(chip);
          const style = (globalThis as any).getComputedStyle(chip);
          const out = { state, color: style.color as string, background: style.backgroundColor as string };
          chip.remove();
          return out;
        });
      });
      for (const { state, color, background } of colours) {
        const ratio = contrast(color, background);
        assert.ok(ratio >= 4.5, `${scheme} ${state}: ${color} on ${background} is ${ratio.toFixed(2)}:1`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
