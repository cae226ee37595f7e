// Per-user limits that hold across API processes (issue 29, finding 5): new conversations and turns per minute
// and event streams open at once are counted in PostgreSQL, so two API processes (this test's, and a real
// `npm run api` child process on the same database and Temporal) share them; over a limit the answer is 429
// with Retry-After. A deleted conversation gives nothing back.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { ALICE, BOB, CAROL, TOKENS, type TestApp, startTestApp } from '../support/test-app.ts';
import { startApiProcess, stopProcess } from '../support/worker-process.ts';

const LIMITS = { USER_EVENT_STREAMS: '2', USER_NEW_CONVERSATIONS_PER_MINUTE: '3', USER_TURNS_PER_MINUTE: '4' };

let app: TestApp;
let child: ChildProcess | undefined;
let otherUrl: string;

before(async () => {
  app = await startTestApp({ env: LIMITS });
  const other = await startApiProcess(app, { API_TOKENS: JSON.stringify(TOKENS), ...LIMITS });
  child = other.child;
  otherUrl = other.url;
});
after(async () => {
  if (child) await stopProcess(child);
  await app?.stop();
});

/** Counts are per clock minute: a test that needs one whole waits for a minute with time enough left. */
async function freshMinute(): Promise<void> {
  const intoMinute = (Date.now() % 60_000) / 1000;
  if (intoMinute > 35) await new Promise((resolve) => setTimeout(resolve, (60.5 - intoMinute) * 1000));
}

/** alternately this test's API and the other process's */
const apis = () => [app.baseUrl, otherUrl];

async function call(baseUrl: string, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: text ? JSON.parse(text) : undefined };
}

describe('per-user limits across two API processes', () => {
  test('new conversations per minute: the fourth is refused by either process, with Retry-After; a delete gives nothing back', async () => {
    await freshMinute();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await call(apis()[i % 2]!, 'POST', '/v1/conversations', ALICE, { agent: 'support' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      made.push(created.body.id);
    }
    for (const baseUrl of apis()) {
      const refused = await call(baseUrl, 'POST', '/v1/conversations', ALICE, { agent: 'support' });
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      const seconds = Number(refused.retryAfter);
      assert.ok(seconds >= 1 && seconds <= 60, `Retry-After ${refused.retryAfter}`);
      assert.match(refused.body.error, /at most 3 a minute/);
    }
    assert.equal((await call(otherUrl, 'DELETE', `/v1/conversations/${made[0]}`, ALICE)).status, 204);
    assert.equal((await call(app.baseUrl, 'POST', '/v1/conversations', ALICE, { agent: 'support' })).status, 429);
    // another user has limits of their own
    assert.equal((await call(otherUrl, 'POST', '/v1/conversations', CAROL, { agent: 'support' })).status, 201);
  });

  test('turns per minute, counted across both processes', async () => {
    const created = await call(app.baseUrl, 'POST', '/v1/conversations', BOB, { agent: 'recipes' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    await freshMinute();
    for (let i = 0; i < 4; i++) {
      const turn = await call(apis()[i % 2]!, 'POST', `/v1/conversations/${id}/messages`, BOB, { text: 'hello' });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
    }
    for (const baseUrl of apis()) {
      const refused = await call(baseUrl, 'POST', `/v1/conversations/${id}/messages`, BOB, { text: 'hello again' });
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.ok(Number(refused.retryAfter) >= 1);
    }
  });

  test('event streams open at once: a third is refused while two are open in either process, and allowed once one closes', async () => {
    const created = await call(otherUrl, 'POST', '/v1/conversations', CAROL, { agent: 'support' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const path = `/v1/conversations/${created.body.id}/events`;
    const open = async (baseUrl: string) => {
      const controller = new AbortController();
      const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${CAROL}` }, signal: controller.signal });
      return { response, close: () => controller.abort() };
    };
    const first = await open(app.baseUrl);
    const second = await open(otherUrl);
    assert.equal(first.response.status, 200);
    assert.equal(second.response.status, 200);
    for (const baseUrl of apis()) {
      const third = await open(baseUrl);
      assert.equal(third.response.status, 429, await third.response.text());
      assert.ok(Number(third.response.headers.get('retry-after')) >= 1);
    }
    second.close();
    // the other process notices the closed connection and gives the lease back
    let again: Awaited<ReturnType<typeof open>> | undefined;
    for (const until = Date.now() + 20_000; ;) {
      again = await open(app.baseUrl);
      if (again.response.status === 200) break;
      await again.response.text();
      assert.ok(Date.now() < until, 'the closed stream never gave its lease back');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    again.close();
    first.close();
  });
});
