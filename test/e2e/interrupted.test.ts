// A conversation whose run is stuck (issue 43, item 3), in real Chromium: a reload shows its transcript, says it
// was interrupted and keeps the message box, and a message sent from the page revives it and is answered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scriptedApp } from './app-and-browser.ts';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';
import { type Browser, sendMessage, signInByLink, startConversation, withScreenshot } from './browser.ts';

let app: TestApp;
let fake: FakeGemini;
let browser: Browser;

scriptedApp((parts) => void ({ app, fake, browser } = parts));

test('a stuck conversation still opens with its transcript and message box, and a message from the page revives it', async (t) => {
  const { page } = browser;
  await withScreenshot(t, import.meta.filename, page, async () => {
    await signInByLink(page, app.baseUrl, ALICE);
    const id = await startConversation(page, 'support', 'Stuck');
    fake.script(reply.text('First answer.'));
    await sendMessage(page, 'First question');
    await page.getByText('First answer.').waitFor();

    // every workflow task of its run fails from now on (a type no worker has), as a poisoned payload's would
    const { workflowId } = (await app.call('GET', `/v1/conversations/${id}`)).body as { workflowId: string };
    await app.client.workflow.getHandle(workflowId).terminate('replaced by a stuck run');
    await app.client.workflow.start('noSuchWorkflowType', { workflowId, taskQueue: app.taskQueue, args: [] });
    const deadline = Date.now() + 60_000;
    while (((await app.client.workflow.getHandle(workflowId).describe()).raw.pendingWorkflowTask?.attempt ?? 0) < 3) {
      assert.ok(Date.now() < deadline, 'the run was not stuck within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Interrupted: send a message to go on' }).waitFor();
    await page.getByText('First answer.').waitFor();
    assert.equal(await page.getByText('Something went wrong').count(), 0);

    fake.script(reply.text('Second answer.'));
    await sendMessage(page, 'Second question');
    await page.getByText('Second answer.').waitFor();
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.body.status, 'idle', 'revived');
  });
});
