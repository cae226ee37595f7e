// A dropped event stream: the reply streams in from SSE deltas, the connection is cut mid-reply, and the
// client resumes from Last-Event-ID, so the transcript has neither a gap nor a duplicate. A second message
// written while the turn runs is held and sent when it ends.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { scriptedApp } from './app-and-browser.ts';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';
import {
  type Browser,
  type CuttingProxy,
  sendMessage,
  signInByLink,
  startConversation,
  startCuttingProxy,
  withScreenshot,
} from './browser.ts';

let app: TestApp;
let fake: FakeGemini;
let proxy: CuttingProxy;
let browser: Browser;

scriptedApp(async (parts) => {
  ({ app, fake, browser } = parts);
  proxy = await startCuttingProxy(app.baseUrl);
});
after(async () => {
  await proxy?.close();
});

const WORDS = Array.from({ length: 36 }, (_, i) => `w${String(i + 1).padStart(2, '0')}`);

test('a reply streams in; after a dropped stream it resumes without gaps or duplicates', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, proxy.url, ALICE);
    const id = await startConversation(page, 'support', 'Streaming');
    await page.locator('.stream-live').waitFor();

    const full = WORDS.map((w) => `${w} `).join('');
    fake.script(
      reply.text(
        WORDS.map((w) => `${w} `),
        { intervalMs: 120 },
      ),
      reply.text('second answer'),
    );
    await sendMessage(page, 'tell me a long story');

    // the draft shows the first words before the reply has ended
    const draft = page.locator('.msg.streaming');
    await draft.getByText(/w03/).waitFor();
    const before = await draft.innerText();
    assert.ok(!before.includes('w36'), 'still streaming');

    // a second message while the turn runs is held, not lost
    await sendMessage(page, 'and another thing');
    await page.getByText(/Held until the answer is done/).waitFor();

    assert.ok(proxy.cutEventStreams() >= 1, 'an event stream was open');
    await page.locator('.stream-reconnecting').waitFor({ timeout: 3_000 });
    await page.locator('.stream-live').waitFor();
    const resumedFrom = proxy.lastEventIds.at(-1)!;
    assert.match(resumedFrom, /^\d+$/, 'the reconnect carried Last-Event-ID');
    assert.ok(Number(resumedFrom) > 0);

    // mid-stream after the reconnect the draft is a prefix of the reply: nothing missing, nothing twice
    const middle = (
      await draft
        .locator('p')
        .innerText({ timeout: 1_000 })
        .catch(() => '')
    )
      .replace(/▍/g, '')
      .trim();
    if (middle) assert.ok(full.startsWith(`${middle} `) || full.trim() === middle, `draft "${middle}" is a prefix of the reply`);

    // the final message, not the draft: live deltas bring the draft to its last word before the record lands
    const answer = page.locator('.msg.assistant:not(.streaming)', { hasText: 'w36' });
    await answer.waitFor();
    assert.equal((await answer.locator('p').innerText()).trim(), full.trim());

    // the held message went out after the turn ended, once
    await page.locator('.msg.assistant:not(.streaming)', { hasText: 'second answer' }).waitFor();
    const users = await page.locator('.msg.user p').allInnerTexts();
    assert.deepEqual(users, ['tell me a long story', 'and another thing']);
    assert.equal(await page.locator('.msg.assistant').count(), 2);

    // the page shows what the server has, in order
    const view = await app.call('GET', `/v1/conversations/${id}`);
    const shown = await page
      .locator('.transcript > .msg.user, .transcript > .msg.assistant')
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-message-id')));
    assert.deepEqual(
      shown,
      view.body.messages.map((m: { id: string }) => m.id),
    );
  });
});
