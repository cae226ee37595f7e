// The support agent through the web client, clicking as a person would: the dev sign-in link, a
// conversation, an approval whose edited arguments the server refuses (shown at the field) and then
// accepts; a token without the role gets a clear message; sign-out forgets the token.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { ALICE, BOB, type TestApp } from '../support/test-app.ts';
import {
  type Browser,
  fullyInViewAboveComposer,
  sendMessage,
  signInByLink,
  startConversation,
  visibleTranscript,
  withScreenshot,
  consoleErrorsDuring,
} from './browser.ts';
import { offlineApp } from './app-and-browser.ts';

let app: TestApp;
let browser: Browser;

offlineApp((parts) => void ({ app, browser } = parts));

async function customerPhone(userId: string): Promise<string> {
  const client = new pg.Client({ connectionString: app.adminUrl });
  await client.connect();
  try {
    return (await client.query('SELECT phone FROM customers WHERE id = $1', [userId])).rows[0].phone;
  } finally {
    await client.end();
  }
}

describe('support in the web client', () => {
  test('the API serves the app at / and never shadows the API', async () => {
    const page = await fetch(`${app.baseUrl}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root">/);
    const deep = await fetch(`${app.baseUrl}/c/some-conversation`, { headers: { accept: 'text/html' } });
    assert.equal(deep.status, 200, 'the SPA fallback serves client routes');
    const api = await fetch(`${app.baseUrl}/v1/nope`, { headers: { accept: 'text/html' } });
    assert.equal(api.status, 401, '/v1 stays the API');
    const unknown = await app.call('GET', '/v1/no-such-route');
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body.error, 'string');
    assert.equal(
      (await fetch(`${app.baseUrl}/openapi.json`, { headers: { accept: 'text/html' } })).headers.get('content-type')?.includes('json'),
      true,
    );
  });

  test('an approval: an edit the server refuses is shown at its field, the fixed edit runs', async (t) => {
    const { page } = browser;
    const consoleErrors = consoleErrorsDuring(t, page);
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('brigade.token')), ALICE);

      await startConversation(page, 'support', 'Phone change');
      // an empty conversation suggests what to ask; a suggestion goes into the message box
      const examples = page.getByRole('region', { name: /Not sure where to start/ });
      await examples.getByRole('button', { name: 'status of order 24601' }).click();
      assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), 'status of order 24601');
      await sendMessage(page, 'update 1213210 phone 555-123-4567');

      const card = page.getByRole('article', { name: /Approve: Change the contact details of customer 1213210/ });
      await card.waitFor();
      // the view follows: the card is whole, above the composer, and has the focus
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.closest('.pending-card') !== null);
      const inView = await fullyInViewAboveComposer(card);
      assert.ok(inView.ok, `the approval card is in view above the composer: ${inView.detail}`);
      assert.equal(await page.title(), '(1) Phone change — Brigade', 'the tab says something waits');
      // the call in words, the raw arguments only behind a toggle
      assert.match(await visibleTranscript(page), /Change the contact details of customer 1213210: phone 555-123-4567/);
      assert.doesNotMatch(await visibleTranscript(page, { replies: true }), /\{"/);

      await card.getByText(/Decide within: /).waitFor();
      await card.getByRole('button', { name: 'Change…' }).click();
      const phone = card.getByLabel(/^Phone/);
      assert.equal(await phone.inputValue(), '555-123-4567');

      await phone.fill('555-12');
      await card.getByRole('button', { name: 'Approve with these changes' }).click();
      const fieldError = card.locator('#' + (await phone.getAttribute('id')) + '-error');
      await fieldError.waitFor();
      assert.match(await fieldError.innerText(), /^Must be a phone number in format XXX-XXX-XXXX\.$/, 'a sentence at the field');
      assert.equal(await phone.getAttribute('aria-invalid'), 'true');
      assert.equal(await phone.inputValue(), '555-12', 'what was typed stays');

      await phone.fill('555-987-6543');
      await card.getByRole('button', { name: 'Approve with these changes' }).click();
      await card.waitFor({ state: 'detached' });
      // the result in words, the raw result behind its toggle
      const result = page.locator('.msg.tool', { hasText: 'Contact details saved' }).last();
      await result.waitFor();
      assert.match(await result.innerText(), /555-987-6543/);
      await result.getByText('Details', { exact: true }).click();
      assert.match(await result.locator('pre').innerText(), /555-987-6543/);
      // the edit is not lost: the call shows what ran, and what the person changed
      const call = page.locator('.tool-call', { hasText: 'Change the contact details' }).last();
      assert.match(await call.innerText(), /customer 1213210: phone 555-987-6543/);
      assert.match(await call.locator('.changed').innerText(), /You changed phone: 555-123-4567\s*→?\s*(to)?\s*555-987-6543/);
      // the record says what was approved: the phone saved, and what it changed from (it named the old one)
      const record = page.locator('.msg.record', { hasText: 'You approved with changes' });
      await record.waitFor();
      await page.waitForFunction(() =>
        /phone 555-987-6543/.test((globalThis as any).document.querySelector('.msg.record.closed')?.textContent ?? ''),
      );
      assert.match(await record.innerText(), /customer 1213210: phone 555-987-6543 \(changed: phone 555-123-4567 → 555-987-6543\)/);
      assert.equal(await customerPhone('1213210'), '555-987-6543');
      // the decision's result has the focus, not the page body
      assert.notEqual(await page.evaluate(() => (globalThis as any).document.activeElement?.tagName), 'BODY');
      await page.waitForFunction(() => (globalThis as any).document.title === 'Phone change — Brigade');
      // the refused edit is a 422 the browser logs as a failed request; nothing else may log an error
      assert.deepEqual(
        consoleErrors.filter((text) => !/status of 422/.test(text)),
        [],
        'no console errors',
      );

      // usage and the workflow's id are kept for operators, under Options → Details
      await page.locator('.conversation-head details.menu > summary').click();
      await page.locator('details.ops > summary').click();
      await page.getByText(/Estimated cost:/).waitFor();
      assert.match(await page.locator('.usage').innerText(), /tokens/);
      assert.match(await page.locator('details.ops').innerText(), /Workflow ID conversation-/);
      await page.locator('.conversation-head details.menu > summary').click();
    });
  });

  test('a rejection is "you declined", not a failure; a reload opens at the pending card, also on a phone', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      try {
        await signInByLink(page, app.baseUrl, ALICE);
        await page.goto(`${app.baseUrl}/`);
        await startConversation(page, 'support', 'Cancel request');
        // enough history that the page scrolls
        for (const ask of ['orders for 1213210', 'status of order 24601', 'look up john@gmail.com']) {
          await sendMessage(page, ask);
          await page
            .locator('.msg.tool')
            .nth(await page.locator('.msg.tool').count())
            .waitFor();
        }
        // after a send, the newest reply is in view above the composer
        const last = page.locator('ol.transcript > li').last();
        await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');
        const replyInView = await fullyInViewAboveComposer(last);
        assert.ok(replyInView.ok, `the newest reply is in view above the composer: ${replyInView.detail}`);
        assert.equal(
          await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth),
          true,
          'no horizontal scroll at 375 px',
        );

        await sendMessage(page, 'cancel order 13579');
        const card = page.getByRole('article', { name: /Approve: Cancel order 13579/ });
        await card.waitFor();
        const sent = await fullyInViewAboveComposer(card.getByRole('button', { name: 'Approve' }));
        assert.ok(sent.ok, `on a phone the card's decision is in view after sending: ${sent.detail}`);

        // a reload opens at the card, not at the top
        await page.reload();
        await card.waitFor();
        await page.waitForFunction(() => (globalThis as any).document.activeElement?.closest('.pending-card') !== null);
        const reloaded = await fullyInViewAboveComposer(card.getByRole('button', { name: 'Approve' }));
        assert.ok(reloaded.ok, `after a reload the card is in view: ${reloaded.detail}`);
        assert.ok((await page.locator('.scroller').evaluate((el) => el.scrollTop)) > 0, 'the transcript is not left at its top');
        assert.equal(await page.evaluate(() => (globalThis as any).scrollY), 0, 'the page itself does not scroll');

        // keyboard only: Reject…, a reason, Enter on Reject
        await card.getByRole('button', { name: 'Reject…' }).focus();
        await page.keyboard.press('Enter');
        await page.keyboard.type('the customer changed her mind');
        await card.getByRole('button', { name: 'Reject', exact: true }).focus();
        await page.keyboard.press('Enter');
        await card.waitFor({ state: 'detached' });

        const record = page.locator('.msg.record', { hasText: 'You declined' });
        await record.waitFor();
        assert.match(await record.innerText(), /You declined: cancel order 13579 \(the customer changed her mind\)/);
        // said once, where the item opened: the declined result does not repeat it
        await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');
        assert.equal(await page.locator('.msg.tool.declined').count(), 0);
        assert.equal(
          (await visibleTranscript(page)).match(/You declined: cancel order 13579/g)?.length,
          1,
          'the rejection is printed once',
        );
        const text = await visibleTranscript(page);
        assert.doesNotMatch(text, /failed/i, 'a rejection is not a failure');
        assert.doesNotMatch(await visibleTranscript(page, { replies: true }), /\{"/, 'no JSON in the transcript, replies included');
        assert.doesNotMatch(text, /cancel_order|order_id/, 'no tool names in the transcript');
        assert.equal(await page.locator('.msg.tool.failed').count(), 0);
        assert.notEqual(
          await page.evaluate(() => (globalThis as any).document.activeElement?.tagName),
          'BODY',
          'focus lands on what the decision did',
        );

        // scrolled up, a reply arriving (here from another client of the API) is announced, not jumped to
        await page.waitForFunction(() => (globalThis as any).document.querySelector('.status')?.textContent === 'Ready');
        await page.locator('.scroller').evaluate((el) => el.scrollTo(0, 0));
        const id = /\/c\/([^/]+)/.exec(page.url())![1]!;
        const before = await page.locator('ol.transcript > li').count();
        const posted = await app.call('POST', `/v1/conversations/${id}/messages`, {
          body: { text: 'status of order 24601' },
          headers: { 'idempotency-key': `e2e-${Date.now()}` },
        });
        assert.ok(posted.status < 300, JSON.stringify(posted.body));
        await page.locator('ol.transcript > li').nth(before).waitFor({ state: 'attached' });
        const newBelow = page.getByRole('button', { name: /New messages/ });
        await newBelow.waitFor();
        assert.equal(await page.locator('.scroller').evaluate((el) => el.scrollTop), 0, 'the reader stays where they were');
        await newBelow.click();
        await newBelow.waitFor({ state: 'detached' });
        const newest = await fullyInViewAboveComposer(page.locator('ol.transcript > li').last());
        assert.ok(newest.ok, `"New messages" shows the newest above the composer: ${newest.detail}`);
      } finally {
        await page.setViewportSize({ width: 1280, height: 860 });
      }
    });
  });

  test('the sign-in link works in a tab that already shows the app, and leaves the address bar', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await signInByLink(page, app.baseUrl, ALICE);
      await page.getByText(/Signed in as alice/).waitFor();
      await page.evaluate((token) => {
        (globalThis as any).location.hash = `token=${token}`;
      }, BOB);
      await page.getByText(/Signed in as bob/).waitFor();
      assert.equal(new URL(page.url()).hash, '');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('brigade.token')), BOB);
      await page.evaluate((token) => {
        (globalThis as any).location.hash = `token=${token}`;
      }, ALICE);
      await page.getByText(/Signed in as alice/).waitFor();
      // the same link again (a second click on it): still signed in, not left waiting on "Signing in…"
      await page.evaluate((token) => {
        (globalThis as any).location.hash = `token=${token}`;
      }, ALICE);
      await page.waitForFunction(() => (globalThis as any).location.hash === '');
      await page.getByText(/Signed in as alice/).waitFor({ timeout: 5_000 });
      assert.equal(await page.getByText('Signing in…').count(), 0);
    });
  });

  test('a token without the role gets a clear message, then sign-out forgets the token', async (t) => {
    const { page } = browser;
    await withScreenshot(t, import.meta.filename, page, async () => {
      await page.goto(`${app.baseUrl}/`);
      await page.getByRole('button', { name: 'Sign out' }).or(page.getByLabel('Bearer token')).first().waitFor();
      if (await page.getByRole('button', { name: 'Sign out' }).isVisible()) await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Bearer token').fill(BOB);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as').waitFor();
      const option = page.getByLabel('Agent').locator('option[value="support"]');
      assert.match(await option.innerText(), /needs the "support" role/);
      await page.getByLabel('Agent').selectOption('support');
      await page.getByRole('button', { name: 'Start', exact: true }).click();
      const alert = page.locator('.new-conversation [role="alert"]');
      await alert.waitFor();
      assert.match(
        await alert.innerText(),
        /Only users with the "support" role may use the support agent.*Ask an administrator for the role/s,
      );

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Bearer token').waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('brigade.token')), null);

      // a refused token is a message, not a blank page
      await page.getByLabel('Bearer token').fill('not-a-valid-token-at-all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(/That token was refused: check it and try again/).waitFor();
    });
  });
});
