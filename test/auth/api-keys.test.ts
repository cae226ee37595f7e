// Issue 34: personal API keys across two API processes on one database. A key is made on one process and used
// on the other (`npm run api` as a child process); revoking it, its expiry and disabling its owner stop it at
// once on both, since every request asks PostgreSQL. No line either process logs holds a key.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../stack/ports.ts';
import { temporalAddress } from '../support/harness.ts';
import { ALICE, BOB, CAROL, TOKENS, type TestApp, startTestApp } from '../support/test-app.ts';

const API_MAIN = new URL('../../bin/api.ts', import.meta.url).pathname;

let app: TestApp;
let other: ChildProcess;
let otherUrl: string;
let otherLog = '';

before(async () => {
  app = await startTestApp({ worker: false });
  const port = await freePort();
  other = spawn(process.execPath, [API_MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: app.databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: app.taskQueue,
      API_TOKENS: JSON.stringify(TOKENS),
      PORT: String(port),
      LOG_LEVEL: 'debug',
      // as the test app (test/support/test-app.ts): the keys' own tests are in payload-encryption.test.ts
      PAYLOAD_ENCRYPTION: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.once('exit', () => other.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      otherLog += chunk.toString();
      if (otherLog.includes('Brigade API listening')) resolve();
    };
    other.stdout!.on('data', onData);
    other.stderr!.on('data', onData);
    other.once('exit', (code) => reject(new Error(`the second API exited with ${code}:\n${otherLog}`)));
  });
  otherUrl = `http://127.0.0.1:${port}`;
});
after(async () => {
  if (other && other.exitCode === null) {
    const exited = once(other, 'exit');
    other.kill('SIGTERM');
    await exited;
  }
  await app?.stop();
});

/** A call to the second API process. */
async function onOther(method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${otherUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

async function makeKey(token: string, body: unknown = { name: 'script' }) {
  const made = await app.call('POST', '/v1/api-keys', { token, body });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body as { id: string; name: string; key: string; expiresAt: string | null };
}

describe('personal API keys across two API processes', () => {
  test('made on one, used on the other, listed without secrets, revoked: 401 at once on both', async () => {
    const conversation = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'support', title: 'for the script' } });
    assert.equal(conversation.status, 201);

    const made = await makeKey(ALICE, { name: 'nightly export' });
    assert.match(made.key, /^brg_[A-Za-z0-9_-]{43}$/);
    assert.equal(made.name, 'nightly export');
    assert.equal(made.expiresAt, null);

    const listed = await onOther('GET', '/v1/api-keys', ALICE);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.keys.length, 1);
    assert.equal(listed.body.keys[0].id, made.id);
    assert.equal(listed.body.keys[0].lastUsedAt, null);
    assert.ok(!JSON.stringify(listed.body).includes(made.key.slice(4)), 'the list holds no secret');
    const [stored] = await app.adminQuery("SELECT encode(key_digest, 'hex') AS digest FROM api_keys WHERE id = $1", [made.id]);
    assert.ok(!stored.digest.includes(Buffer.from(made.key).toString('hex')), 'the key is stored as a digest');

    const used = await onOther('GET', '/v1/conversations', made.key);
    assert.equal(used.status, 200, JSON.stringify(used.body));
    assert.deepEqual(
      used.body.conversations.map((c: { id: string }) => c.id),
      [conversation.body.id],
    );
    const meta = await onOther('GET', '/v1/meta', made.key);
    assert.equal(meta.body.user, 'alice');
    assert.deepEqual(meta.body.roles, ['support']);
    const afterUse = await app.call('GET', '/v1/api-keys', { token: ALICE });
    assert.ok(afterUse.body.keys[0].lastUsedAt, 'lastUsedAt is set');

    // another user's key is not found, on either process
    assert.equal((await onOther('DELETE', `/v1/api-keys/${made.id}`, BOB)).status, 404);
    assert.equal((await app.call('DELETE', `/v1/api-keys/${made.id}`, { token: BOB })).status, 404);

    const revoked = await app.call('DELETE', `/v1/api-keys/${made.id}`, { token: ALICE });
    assert.equal(revoked.status, 204);
    for (const response of [
      await onOther('GET', '/v1/conversations', made.key),
      await app.call('GET', '/v1/conversations', { token: made.key }),
    ]) {
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="[^"]*revoked/);
      assert.ok(!(response.headers.get('www-authenticate') ?? '').includes(made.key));
    }
    assert.equal((await app.call('DELETE', `/v1/api-keys/${made.id}`, { token: ALICE })).status, 404);
  });

  test("a key acts with the smaller of its roles and its owner's, and cannot make keys", async () => {
    const none = await makeKey(ALICE, { name: 'read only', roles: [] });
    const meta = await onOther('GET', '/v1/meta', none.key);
    assert.deepEqual(meta.body.roles, []);
    const support = await onOther('POST', '/v1/conversations', none.key, { agent: 'support' });
    assert.equal(support.status, 403);

    const refused = await app.call('POST', '/v1/api-keys', { token: BOB, body: { name: 'escalate', roles: ['support'] } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /roles: you do not hold "support"/);

    const minted = await onOther('POST', '/v1/api-keys', none.key, { name: 'from a key' });
    assert.equal(minted.status, 403);

    const bad = await app.call('POST', '/v1/api-keys', { token: ALICE, body: { name: '', expiresAt: '2001-01-01T00:00:00Z' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.fields.map((f: { field: string }) => f.field).sort(), ['expiresAt', 'name']);
  });

  test('an expired key answers 401 at once', async () => {
    const soon = await makeKey(ALICE, { name: 'short', expiresAt: new Date(Date.now() + 1500).toISOString() });
    assert.ok(soon.expiresAt);
    assert.equal((await onOther('GET', '/v1/meta', soon.key)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    const expired = await onOther('GET', '/v1/meta', soon.key);
    assert.equal(expired.status, 401);
    assert.match(expired.headers.get('www-authenticate') ?? '', /expired/);
  });

  test('a key stops when its owner is disabled, and when its owner has not been seen for too long', async () => {
    const carolKey = await makeKey(CAROL, { name: 'carol script' });
    assert.equal((await onOther('GET', '/v1/meta', carolKey.key)).status, 200);
    await app.adminQuery("UPDATE users SET disabled_at = now() WHERE user_id = 'carol'");
    const disabled = await onOther('GET', '/v1/meta', carolKey.key);
    assert.equal(disabled.status, 401);
    assert.match(disabled.headers.get('www-authenticate') ?? '', /owner is disabled/);
    assert.equal((await app.call('GET', '/v1/meta', { token: carolKey.key })).status, 401);

    const aliceKey = await makeKey(ALICE, { name: 'old' });
    await app.adminQuery("UPDATE users SET last_seen_at = now() - interval '31 days' WHERE user_id = 'alice'");
    const unseen = await onOther('GET', '/v1/meta', aliceKey.key);
    assert.equal(unseen.status, 401);
    assert.match(unseen.headers.get('www-authenticate') ?? '', /not signed in for too long/);
  });

  test('the OpenAPI document has the API keys routes', async () => {
    const doc = await app.call('GET', '/openapi.json', { token: '' });
    assert.ok(doc.body.paths['/v1/api-keys'].post && doc.body.paths['/v1/api-keys'].get && doc.body.paths['/v1/api-keys/{id}'].delete);
    assert.deepEqual(Object.keys(doc.body.paths['/v1/api-keys'].post.responses).sort(), ['201', '400', '401', '403', '429', '503']);
  });

  test('no log line of the second API process holds a key', () => {
    assert.ok(!/brg_[A-Za-z0-9_-]{10}/.test(otherLog), otherLog);
  });
});
