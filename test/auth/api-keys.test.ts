// Issue 34: personal API keys across two API processes on one database. A key is made on one process and used
// on the other (`npm run api` as a child process); revoking it, its expiry and disabling its owner stop it at
// once on both, since every request asks PostgreSQL. No line either process logs holds a key.
// Issue 42: a key follows its owner's standing (an API started without the owner's API_TOKENS entry stops it on
// every process), and does only what its scopes allow.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Connection } from '@temporalio/client';
import type { TokenGrant } from '../../src/config.ts';
import { apiKeyDigest } from '../../src/api/api-keys.ts';
import { freePort } from '../../stack/ports.ts';
import { temporalAddress } from '../support/harness.ts';
import { ALICE, BOB, CAROL, TOKENS, type TestApp, serveApi, startTestApp } from '../support/test-app.ts';

const API_MAIN = new URL('../../bin/api.ts', import.meta.url).pathname;
// An operator of this file alone: erasing them (DELETE /v1/me) searches Temporal's shared server by user.
const OPS_USER = `ops-${randomBytes(6).toString('hex')}`;
const OPS = `token-${OPS_USER}-operator-000000`;
const EXTRA_TOKENS: Record<string, TokenGrant> = { [OPS]: { user: OPS_USER, roles: ['operator'] } };

let app: TestApp;
let other: ChildProcess;
let otherUrl: string;
let otherLog = '';

before(async () => {
  // sealed payloads, so that the codec server answers a key with the operator scope with its work, not a 404
  app = await startTestApp({
    worker: false,
    tokens: EXTRA_TOKENS,
    env: { PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }) },
  });
  const port = await freePort();
  other = spawn(process.execPath, [API_MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: app.databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: app.taskQueue,
      API_TOKENS: JSON.stringify({ ...TOKENS, ...EXTRA_TOKENS }),
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
const onOther = (method: string, path: string, token: string, body?: unknown) => callAt(otherUrl, method, path, token, body);

async function callAt(baseUrl: string, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
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
  return made.body as { id: string; name: string; key: string; expiresAt: string | null; scopes: string[] };
}

/** Another API process in this one, on the test app's database, serving TOKENS and `tokens`: an API (re)start. */
async function startApi(tokens: Record<string, TokenGrant> = {}): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const connection = await Connection.connect({ address: temporalAddress() });
  const { server, baseUrl } = await serveApi({ ...app, connection, tokens: { ...EXTRA_TOKENS, ...tokens } });
  return {
    baseUrl,
    async stop() {
      (server as Server).closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await connection.close();
    },
  };
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
    assert.deepEqual(listed.body.keys[0].scopes, ['conversations'], 'a key has the default scope unless asked');
    assert.deepEqual(made.scopes, ['conversations']);
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

  test("a key stops when its owner is disabled, and when a provider's person has not signed in for too long", async () => {
    const carolKey = await makeKey(CAROL, { name: 'carol script' });
    assert.equal((await onOther('GET', '/v1/meta', carolKey.key)).status, 200);
    await app.adminQuery("UPDATE users SET disabled_at = now() WHERE user_id = 'carol'");
    const disabled = await onOther('GET', '/v1/meta', carolKey.key);
    assert.equal(disabled.status, 401);
    assert.match(disabled.headers.get('www-authenticate') ?? '', /owner is disabled/);
    assert.equal((await app.call('GET', '/v1/meta', { token: carolKey.key })).status, 401);

    // A provider's person: their standing is their last sign-in (Brigade is never told of a removal).
    const oidcKey = `brg_${randomBytes(32).toString('base64url')}`;
    await app.adminQuery(
      "INSERT INTO users (user_id, iss, sub, roles, last_seen_at) VALUES ('oidc:unseen', 'https://idp.example', 'unseen', '{}', now() - interval '31 days')",
    );
    await app.adminQuery("INSERT INTO api_keys (id, user_id, name, key_digest) VALUES (gen_random_uuid(), 'oidc:unseen', 'old', $1)", [
      apiKeyDigest(oidcKey),
    ]);
    const unseen = await onOther('GET', '/v1/meta', oidcKey);
    assert.equal(unseen.status, 401);
    assert.match(unseen.headers.get('www-authenticate') ?? '', /not signed in for too long/);
    await app.adminQuery("UPDATE users SET last_seen_at = now() WHERE user_id = 'oidc:unseen'");
    assert.equal((await onOther('GET', '/v1/meta', oidcKey)).status, 200);
    // a row written without scopes, as every key made before migration 042: the default scope alone
    assert.equal((await onOther('GET', '/v1/me/export', oidcKey)).status, 403);

    // An API_TOKENS user's standing is their entry, which every API start records: not their last call.
    const aliceKey = await makeKey(ALICE, { name: 'old' });
    await app.adminQuery("UPDATE users SET last_seen_at = now() - interval '31 days' WHERE user_id = 'alice'");
    assert.equal((await onOther('GET', '/v1/meta', aliceKey.key)).status, 200);
  });

  test("an API started without the owner's API_TOKENS entry stops the owner's keys on every API process; the entry back, they work", async () => {
    const kimToken = 'token-kim-operator-leaving-0000000';
    const kim = { [kimToken]: { user: 'kim', roles: ['operator', 'support'] } };
    const withKim = await startApi(kim);
    let key = { key: '' };
    try {
      const made = await callAt(withKim.baseUrl, 'POST', '/v1/api-keys', kimToken, { name: 'kim script', scopes: ['operator'] });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      key = made.body;
      for (const baseUrl of [withKim.baseUrl, otherUrl, app.baseUrl]) {
        const meta = await callAt(baseUrl, 'GET', '/v1/meta', key.key);
        assert.equal(meta.status, 200);
        assert.deepEqual(meta.body.roles, ['operator', 'support']);
      }
    } finally {
      await withKim.stop();
    }

    // The restart: the same database, API_TOKENS without kim.
    const withoutKim = await startApi();
    try {
      assert.equal((await callAt(withoutKim.baseUrl, 'GET', '/v1/meta', kimToken)).status, 401, "kim's token is gone");
      // the restarted process, the child process that was running all along, and the test app's: all refuse
      for (const baseUrl of [withoutKim.baseUrl, otherUrl, app.baseUrl]) {
        for (const [method, path] of [
          ['GET', '/v1/meta'],
          ['GET', '/v1/conversations'],
        ] as const) {
          const refused = await callAt(baseUrl, method, path, key.key);
          assert.equal(refused.status, 401, `${method} ${path} on ${baseUrl === otherUrl ? 'the child process' : baseUrl}`);
          assert.match(refused.headers.get('www-authenticate') ?? '', /owner is no longer in API_TOKENS/);
        }
      }
      assert.equal((await callAt(otherUrl, 'POST', '/codec/encode', key.key, { payloads: [] })).status, 401);
    } finally {
      await withoutKim.stop();
    }

    // Back in API_TOKENS, with fewer roles: the key works again, with the entry's roles only, before kim calls.
    const back = await startApi({ [kimToken]: { user: 'kim', roles: ['support'] } });
    try {
      const meta = await callAt(back.baseUrl, 'GET', '/v1/meta', key.key);
      assert.equal(meta.status, 200, JSON.stringify(meta.body));
      assert.deepEqual(meta.body.roles, ['support']);
      const onChild = await onOther('GET', '/v1/meta', key.key);
      assert.deepEqual(onChild.body.roles, ['support'], 'the roles shrank for every process');
      assert.equal((await onOther('POST', '/codec/encode', key.key, { payloads: [] })).status, 403, 'no operator role any more');
    } finally {
      await back.stop();
    }
  });

  test('a key without scopes works on conversations and gets 403 on keys, erasure, export and operator routes; with them it works', async () => {
    const plain: { metadata: Record<string, string>; data: string } = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"a signal"').toString('base64'),
    };
    const sealed = await app.call('POST', '/codec/encode', { token: OPS, body: { payloads: [plain] } });
    assert.equal(sealed.status, 200);
    const bobsConversation = await app.call('POST', '/v1/conversations', { token: BOB, body: { agent: 'recipes', title: 'bob' } });
    assert.equal(bobsConversation.status, 201);

    // Every operation that needs a scope, and what the owner's (operator) token gets there.
    const guarded = (revokeId: string) =>
      [
        ['POST', '/v1/api-keys', { name: 'from a key' }, 'keys', 201],
        ['GET', '/v1/api-keys', undefined, 'keys', 200],
        ['DELETE', `/v1/api-keys/${revokeId}`, undefined, 'keys', 204],
        ['GET', '/v1/me/export', undefined, 'export', 200],
        ['GET', '/v1/users/bob/export', undefined, 'operator', 200],
        ['DELETE', `/v1/users/${OPS_USER}-other`, undefined, 'operator', 200],
        ['POST', '/codec/decode', sealed.body, 'operator', 200],
        ['POST', '/codec/encode', { payloads: [plain] }, 'operator', 200],
        ['DELETE', '/v1/me', undefined, 'erase', 204],
      ] as const;

    const plainKey = await makeKey(OPS, { name: 'default scope' });
    const spare = await makeKey(OPS, { name: 'spare' });
    assert.deepEqual(plainKey.scopes, ['conversations']);
    // the default scope: the owner's conversations, read and written, on both processes (no worker: what
    // PostgreSQL answers alone)
    const made = await app.call('POST', '/v1/conversations', { token: plainKey.key, body: { agent: 'recipes', title: 'by a key' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const renamed = await onOther('PATCH', `/v1/conversations/${made.body.id}`, plainKey.key, { title: 'renamed' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    const list = await onOther('GET', '/v1/conversations', plainKey.key);
    assert.deepEqual(
      list.body.conversations.map((c: { title: string }) => c.title),
      ['renamed'],
    );
    for (const [method, path, body, scope] of guarded(spare.id)) {
      for (const baseUrl of [app.baseUrl, otherUrl]) {
        const refused = await callAt(baseUrl, method, path, plainKey.key, body);
        assert.equal(refused.status, 403, `${method} ${path}: ${JSON.stringify(refused.body)}`);
        assert.match(refused.body.error, new RegExp(`not made with the "${scope}"`), `${method} ${path}`);
      }
    }
    assert.equal((await app.call('GET', '/v1/meta', { token: OPS })).status, 200, 'the owner is still there');
    assert.equal((await app.call('GET', '/v1/api-keys', { token: OPS })).body.keys.length, 2, 'nothing revoked');

    // Granting: only scopes the maker holds, by name; the operator scope needs the operator role.
    const unknown = await app.call('POST', '/v1/api-keys', { token: OPS, body: { name: 'x', scopes: ['admin'] } });
    assert.equal(unknown.status, 400);
    assert.deepEqual(
      unknown.body.fields.map((f: { field: string }) => f.field),
      ['scopes.0'],
    );
    const notOperator = await app.call('POST', '/v1/api-keys', { token: BOB, body: { name: 'x', scopes: ['operator'] } });
    assert.equal(notOperator.status, 400);
    assert.match(notOperator.body.error, /scopes: you may not grant "operator"/);

    const full = await makeKey(OPS, { name: 'everything', scopes: ['operator', 'keys', 'export', 'erase'] });
    assert.deepEqual(full.scopes, ['conversations', 'erase', 'export', 'keys', 'operator']);
    const listed = await onOther('GET', '/v1/api-keys', full.key);
    assert.deepEqual(
      listed.body.keys.map((k: { name: string; scopes: string[] }) => [k.name, k.scopes]),
      [
        ['everything', ['conversations', 'erase', 'export', 'keys', 'operator']],
        ['spare', ['conversations']],
        ['default scope', ['conversations']],
      ],
    );

    // A key made by a key: no scope its maker lacks, no later expiry, revoked with its maker.
    const keysOnly = await makeKey(OPS, { name: 'keys only', scopes: ['keys'], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const escalate = await onOther('POST', '/v1/api-keys', keysOnly.key, { name: 'more', scopes: ['erase'] });
    assert.equal(escalate.status, 400);
    assert.match(escalate.body.error, /may not grant "erase"/);
    const child = await onOther('POST', '/v1/api-keys', keysOnly.key, { name: 'child', expiresAt: '2099-01-01T00:00:00Z' });
    assert.equal(child.status, 201);
    assert.equal(child.body.expiresAt, keysOnly.expiresAt, 'the child expires with its maker');
    assert.equal((await app.call('GET', '/v1/meta', { token: child.body.key })).body.roles.join(), 'operator');
    assert.equal((await app.call('DELETE', `/v1/api-keys/${keysOnly.id}`, { token: OPS })).status, 204);
    assert.equal((await onOther('GET', '/v1/meta', child.body.key)).status, 401, 'revoked with its maker');

    // With the scopes, every guarded operation does its work (DELETE /v1/me last: it erases olga, keys and all).
    for (const [method, path, body, , status] of guarded(spare.id)) {
      const done = await callAt(app.baseUrl, method, path, full.key, body);
      assert.equal(done.status, status, `${method} ${path}: ${JSON.stringify(done.body)}`);
    }
    const decoded = await app.call('POST', '/codec/decode', { token: full.key, body: sealed.body });
    assert.equal(decoded.status, 401, "the owner's erasure took their keys with it");
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
