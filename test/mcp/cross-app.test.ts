// Cross-app access (SEP-990) refused: a server reached with the person's sign-in (`grant: "cross_app"`) when
// Brigade holds no sign-in of theirs, and when their identity provider refuses to exchange it for an ID-JAG. A real
// Brigade (worker and API, payload encryption on), the local tracker (test/support/mcp-oauth-tracker.ts) as the MCP
// server and its authorization server, and a loopback identity provider that refuses every token exchange. Each
// call's result says in words to sign in again; the tracker is never called and no Connect is offered in its place.
// A person who signs in through the web (the test OIDC provider) has their ID token kept, sealed, and traded.
// (The flow that succeeds is the conformance suite's auth/cross-app-access-complete-flow, test/mcp/conformance.test.ts.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type FakeGemini, endsWithToolResults, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type Tracker, startTracker } from '../support/mcp-oauth-tracker.ts';
import { ALICE, type TestApp, startTestApp } from '../support/test-app.ts';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, type TestProvider, startTestProvider } from '../support/oidc-provider.ts';
import { PROOF_HEADER } from '../../src/api/web-sign-in.ts';
import { oidcUserId } from '../../src/api/oidc.ts';
import { SIGN_IN_SLOT, TokenVault } from '../../src/mcp/token-vault.ts';
import { freePort } from '../../stack/ports.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-cross-app-'));
let fake: FakeGemini;
let tracker: Tracker;
let app: TestApp;
let idp: http.Server;
let provider: TestProvider;
/** the token exchanges the identity provider was asked for */
const exchanges: URLSearchParams[] = [];

/** An ID token as a provider issues one (its signature is the provider's business: Brigade checked it at sign-in). */
const idToken = (() => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'ES256' })}.${part({ sub: 'alice', aud: 'brigade-at-idp', iat: now, exp: now + 3600 })}.${randomBytes(64).toString('base64url')}`;
})();

before(async () => {
  fake = await startFakeGemini();
  tracker = await startTracker();
  const port = await freePort();
  provider = await startTestProvider({
    redirectUris: [`http://127.0.0.1:${port}/auth/callback`],
    accounts: { olga: { roles: ['support'], name: 'Olga' } },
  });
  idp = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      exchanges.push(new URLSearchParams(body));
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_grant', error_description: 'the session of alice@example.com was revoked' }));
    });
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  const idpUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/token`;
  process.env.CROSS_APP_TEST_SECRET = 'tracker-client-secret';
  const configPath = path.join(dir, 'mcp.json');
  const oauth = {
    grant: 'cross_app',
    clientId: 'brigade',
    clientSecret: '${CROSS_APP_TEST_SECRET}',
    idp: { tokenEndpoint: idpUrl, clientId: 'brigade-at-idp' },
  };
  fs.writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { tracker: { url: tracker.url, auth: 'oauth', oauth, agents: ['support'], approval: 'never' } } }),
  );
  // The model calls what the tracker offers: its tool, or the stand-in when the person's sign-in cannot reach it.
  fake.scriptFn((request) => {
    if (endsWithToolResults(request)) return reply.text('Done.');
    const names = (request.body.tools ?? []).flatMap((tools) => tools.functionDeclarations ?? []).map((declaration) => declaration.name);
    const name = names.find((candidate) => candidate.startsWith('tracker__'));
    return name ? reply.calls({ name, args: {} }) : reply.text('No tracker.');
  });
  app = await startTestApp({
    apiPort: port,
    env: {
      AUTH_OIDC_ISSUER: provider.issuer,
      AUTH_OIDC_AUDIENCE: AUDIENCE,
      AUTH_OIDC_CLIENT_ID: CLIENT_ID,
      AUTH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      AUTH_OIDC_AUDIENCE_PARAM: 'resource',
      GEMINI_API_KEY: 'cross-app-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '10s',
      BRIGADE_MCP_CONFIG: configPath,
      DATA_DIR: path.join(dir, 'data'),
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
    },
  });
});
after(async () => {
  await app?.stop();
  await provider?.close();
  await tracker?.close();
  await fake?.close();
  await new Promise((resolve) => idp?.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A support conversation asks about the tracker (Alice's, or the signed-in session's); the tool's result. */
async function askTracker(as: { token?: string; headers?: Record<string, string> } = { token: ALICE }): Promise<Record<string, any>> {
  const created = await app.call('POST', '/v1/conversations', { ...as, body: { agent: 'support', title: 'tracker' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { ...as, body: { text: 'Who am I at the tracker?' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  let view = await app.call('GET', `/v1/conversations/${id}`, as);
  for (const deadline = Date.now() + 20_000; view.body.status !== 'idle' && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    view = await app.call('GET', `/v1/conversations/${id}`, as);
  }
  const tool = (view.body.messages as any[]).find((message) => message.role === 'tool');
  assert.ok(tool, JSON.stringify(view.body.messages));
  return tool.result;
}

describe('cross-app access (SEP-990) refused', () => {
  test('with no sign-in of the person kept, the call says to sign in again, and nothing is asked of the IdP or the tracker', async () => {
    const result = await askTracker();
    assert.match(
      result.error,
      /^Sign in to Brigade again first: tracker is reached with the person's sign-in at their identity provider, and Brigade holds no sign-in of this person/,
    );
    assert.equal(result.signIn, 'tracker');
    assert.equal(result.connect, undefined, 'no Connect: a cross-app server has none');
    assert.equal(exchanges.length, 0);
    assert.equal(tracker.calls.length, 0);
  });

  test('the identity provider refusing the exchange is said in words (its error code only), and the tracker is never called', async () => {
    // kept as the OIDC sign-in keeps it (web-sign-in.ts → TokenVault.saveIdToken), sealed under Alice's key
    await new TokenVault(app.pool, app.config).saveIdToken('alice', idToken);
    const result = await askTracker();
    assert.equal(
      result.error,
      "Sign in to Brigade again first: tracker is reached with the person's sign-in at their identity provider, and its identity provider refused to exchange the sign-in for access (invalid_grant); the person signs out and signs in again, then asks again.",
    );
    assert.equal(result.signIn, 'tracker');
    assert.doesNotMatch(JSON.stringify(result), /alice@example\.com|eyJ/, "neither the IdP's description nor the token reaches the model");
    // the exchange Brigade asked for: RFC 8693, the ID token for an ID-JAG for the tracker's authorization server
    const asked = exchanges.at(-1)!;
    assert.equal(asked.get('grant_type'), 'urn:ietf:params:oauth:grant-type:token-exchange');
    assert.equal(asked.get('subject_token'), idToken);
    assert.equal(asked.get('subject_token_type'), 'urn:ietf:params:oauth:token-type:id_token');
    assert.equal(asked.get('requested_token_type'), 'urn:ietf:params:oauth:token-type:id-jag');
    assert.equal(asked.get('audience'), tracker.origin);
    assert.equal(asked.get('resource'), tracker.url);
    assert.equal(asked.get('client_id'), 'brigade-at-idp');
    assert.equal(tracker.calls.length, 0);
    assert.equal(tracker.grants.length, 0);
  });

  test("a web sign-in's ID token is kept sealed for the person, and it is what their conversation's call trades", async () => {
    // /auth/login, the provider's form, /auth/callback, as the browser goes
    const start = await fetch(`${app.baseUrl}/auth/login`, { redirect: 'manual' });
    const loginCookie = start.headers
      .getSetCookie()
      .find((c) => c.startsWith('brigade_login='))!
      .split(';')[0]!;
    const back = await provider.authorize(start.headers.get('location')!, 'olga');
    const callback = await fetch(back, { redirect: 'manual', headers: { cookie: loginCookie } });
    const cookie = callback.headers
      .getSetCookie()
      .find((c) => c.startsWith('brigade_session='))!
      .split(';')[0]!;
    const proof = /#session-proof=([A-Za-z0-9_-]{43})$/.exec(callback.headers.get('location') ?? '')![1]!;
    const olga = oidcUserId(provider.issuer, 'olga');
    const [row] = await app.adminQuery<{ key_id: string; sealed: Buffer; expires_at: Date }>(
      'SELECT key_id, sealed, expires_at FROM mcp_oauth_tokens WHERE user_id = $1 AND server = $2',
      [olga, SIGN_IN_SLOT],
    );
    assert.ok(row, 'the sign-in kept its ID token');
    assert.match(row.key_id, /^person:/, "sealed under the person's own key");
    assert.ok(row.expires_at.getTime() > Date.now(), 'kept until its own exp');

    const before = exchanges.length;
    const result = await askTracker({ token: '', headers: { cookie, [PROOF_HEADER]: proof } });
    assert.match(result.error, /its identity provider refused to exchange the sign-in for access \(invalid_grant\)/);
    const traded = exchanges.slice(before).at(-1)!.get('subject_token')!;
    const claims = JSON.parse(Buffer.from(traded.split('.')[1]!, 'base64url').toString('utf8'));
    assert.equal(claims.iss, provider.issuer, "the ID token of Olga's sign-in, issued by her provider");
    assert.equal(claims.sub, 'olga');
    assert.equal(row.sealed.includes(Buffer.from(traded)), false, 'never stored in the clear');
  });

  test('Connect is refused for a cross-app server: the person signs in again instead', async () => {
    // the web client offers Connect for the servers listed perPerson: not this one
    const listed = await app.call('GET', '/v1/mcp/servers', { token: ALICE });
    assert.deepEqual(listed.body.servers, [{ name: 'tracker', auth: 'oauth', perPerson: false, agents: ['support'] }]);
    const started = await app.call('POST', '/v1/mcp/servers/tracker/connect', { token: ALICE });
    assert.equal(started.status, 409);
    assert.match(started.body.error, /reached with the person's sign-in \(cross-app access\): sign in again instead/);
  });
});
