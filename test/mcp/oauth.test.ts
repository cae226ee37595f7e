// MCP servers behind OAuth, per person and sealed (issue 47): a local tracker that is its own authorization server
// and protected resource (test/support/mcp-oauth-tracker.ts), a real Brigade (worker and API, payload encryption on)
// and the scripted Gemini wire. A person connects in the steps a browser takes (Connect, the consent page, the
// redirect through Brigade's page route, the callback with their own credentials); their conversation's call
// carries their token, another person's conversation is told to connect instead; an expiring token is refreshed by
// the worker, a refused refresh asks to connect again; Disconnect and erasure revoke the tokens at the provider
// and delete them; and no token is anywhere in the history (decoded), the logs or the export.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Payload } from '@temporalio/common';
import { type FakeGemini, endsWithToolResults, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type Tracker, startTracker } from '../support/mcp-oauth-tracker.ts';
import { CAROL, type TestApp, startTestApp } from '../support/test-app.ts';
import { payloadCodec } from '../../src/protection/data-converter.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { parseMcpConfig } from '../../src/mcp/config.ts';
import { McpConnections } from '../../src/mcp/connections.ts';
import { TokenVault } from '../../src/mcp/token-vault.ts';

// This file's person: its last test erases them, and an erasure deletes every execution of theirs on the shared
// Temporal server, another test file's too (the conformance driver's alice lost a conversation mid-turn to it).
const OLIVE_USER = 'olive-oauth';
const OLIVE = 'token-olive-oauth-support-000000';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-oauth-'));
let fake: FakeGemini;
let tracker: Tracker;
let app: TestApp;
/** everything the process wrote to its console and standard streams while the tests ran */
let log = '';
const restore: (() => void)[] = [];
const conversations: string[] = [];

function captureLogs(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      log += String(chunk);
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => (stream.write = write));
  }
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[level];
    console[level] = (...args: unknown[]) => {
      log += `${args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ')}\n`;
      original(...args);
    };
    restore.push(() => (console[level] = original));
  }
}

before(async () => {
  captureLogs();
  fake = await startFakeGemini();
  tracker = await startTracker();
  const configPath = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { tracker: { url: tracker.url, auth: 'oauth', agents: ['support'], approval: 'never' } } }),
  );
  // The model calls the tracker's tool when it is offered, else the stand-in that says how to connect it.
  fake.scriptFn((request) => {
    if (endsWithToolResults(request)) return reply.text('Done.');
    const names = (request.body.tools ?? []).flatMap((tools) => tools.functionDeclarations ?? []).map((declaration) => declaration.name);
    const name = names.find((candidate) => candidate === 'tracker__whoami') ?? names.find((candidate) => candidate === 'tracker__connect');
    return name ? reply.calls({ name, args: {} }) : reply.text('No tracker.');
  });
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'oauth-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '10s',
      BRIGADE_MCP_CONFIG: configPath,
      DATA_DIR: path.join(dir, 'data'),
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
    },
    tokens: { [OLIVE]: { user: OLIVE_USER, roles: ['support'] } },
  });
});
after(async () => {
  for (const undo of restore.reverse()) undo();
  await app?.stop();
  await tracker?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A support conversation of `token`'s person asks about the tracker; the tool's result. */
async function askTracker(token: string): Promise<{ tool: string; result: Record<string, any> }> {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'support', title: 'tracker' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  conversations.push(id);
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text: 'Who am I at the tracker?' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  let view = await app.call('GET', `/v1/conversations/${id}`, { token });
  for (const deadline = Date.now() + 20_000; view.body.status !== 'idle' && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    view = await app.call('GET', `/v1/conversations/${id}`, { token });
  }
  const tool = (view.body.messages as any[]).find((message) => message.role === 'tool');
  assert.ok(tool, JSON.stringify(view.body.messages));
  return { tool: tool.tool, result: tool.result };
}

/** Connect as a browser does it: Connect, the consent page, Brigade's page route, the callback with the person's credentials. */
async function connect(token: string, trackerName: string): Promise<void> {
  const started = await app.call('POST', '/v1/mcp/servers/tracker/connect', { token });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const authorizationUrl = new URL(started.body.authorizationUrl);
  assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorizationUrl.searchParams.get('resource'), tracker.url);
  const page = await fetch(authorizationUrl);
  assert.match(await page.text(), /Brigade asks to use the tracker as you/);
  const form = new URLSearchParams(authorizationUrl.searchParams);
  form.set('user', trackerName);
  form.set('decision', 'allow');
  const consent = await fetch(`${tracker.origin}/authorize`, { method: 'POST', body: form, redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  assert.equal(back.pathname, '/mcp/oauth/callback');
  const forwarded = await fetch(`${app.baseUrl}${back.pathname}${back.search}`, { redirect: 'manual' });
  assert.equal(forwarded.status, 303);
  const location = forwarded.headers.get('location')!;
  assert.match(location, /^\/#mcp-oauth\?/, 'code and state go on in the fragment only');
  const done = await app.call('GET', `/v1/mcp/oauth/callback?${location.slice('/#mcp-oauth?'.length)}`, { token });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.deepEqual(done.body, { server: 'tracker', connected: true });
}

const connected = async (token: string) =>
  (await app.call('GET', '/v1/mcp/servers', { token })).body.servers.find((server: any) => server.name === 'tracker');

describe('MCP servers behind OAuth, per person', () => {
  test('a person who has not connected the server is told to connect it, and its tools stay offered', async () => {
    assert.deepEqual(await connected(OLIVE), { name: 'tracker', auth: 'oauth', perPerson: true, connected: false, agents: ['support'] });
    const { tool, result } = await askTracker(OLIVE);
    assert.equal(tool, 'tracker__connect', 'the stand-in tool is offered in place of a server nobody connected');
    assert.match(result.error, /^Connect tracker first: this person has not connected it yet/);
    assert.equal(result.connect, 'tracker');
    assert.equal(tracker.calls.length, 0);
  });

  test("a person connects; their conversation's call carries their token, another person's conversation is refused it", async () => {
    await connect(OLIVE, 'olive-at-tracker');
    assert.equal((await connected(OLIVE)).connected, true);
    const olive = await askTracker(OLIVE);
    assert.equal(olive.tool, 'tracker__whoami');
    assert.equal(olive.result.text, 'Signed in at the tracker as olive-at-tracker.');
    assert.equal(tracker.calls.at(-1)!.token, tracker.grants.at(-1)!.access);

    const before = tracker.calls.length;
    assert.equal((await connected(CAROL)).connected, false);
    const carol = await askTracker(CAROL);
    // Carol is offered the stand-in, never the list Alice's account sees
    assert.equal(carol.tool, 'tracker__connect');
    assert.match(carol.result.error, /^Connect tracker first/);
    assert.equal(tracker.calls.length, before, "no call reached the tracker from Carol's conversation");
  });

  test('an authorization is the person’s who started it, for one use, within ten minutes', async () => {
    const started = await app.call('POST', '/v1/mcp/servers/tracker/connect', { token: OLIVE });
    const form = new URLSearchParams(new URL(started.body.authorizationUrl).searchParams);
    form.set('user', 'mallory');
    form.set('decision', 'allow');
    const back = new URL(
      (await fetch(`${tracker.origin}/authorize`, { method: 'POST', body: form, redirect: 'manual' })).headers.get('location')!,
    );
    const byCarol = await app.call('GET', `/v1/mcp/oauth/callback?${back.searchParams}`, { token: CAROL });
    assert.equal(byCarol.status, 400, 'Carol cannot finish an authorization Alice started');
    assert.match(byCarol.body.error, /unknown, was used already or expired/);
    assert.equal((await app.call('GET', `/v1/mcp/oauth/callback?${back.searchParams}`, { token: OLIVE })).status, 200);
    const again = await app.call('GET', `/v1/mcp/oauth/callback?${back.searchParams}`, { token: OLIVE });
    assert.equal(again.status, 400, 'a state is used once');
    // one left past its ten minutes is refused too
    const late = await app.call('POST', '/v1/mcp/servers/tracker/connect', { token: OLIVE });
    const lateForm = new URLSearchParams(new URL(late.body.authorizationUrl).searchParams);
    lateForm.set('user', 'olive-at-tracker');
    lateForm.set('decision', 'allow');
    const lateBack = new URL(
      (await fetch(`${tracker.origin}/authorize`, { method: 'POST', body: lateForm, redirect: 'manual' })).headers.get('location')!,
    );
    await app.adminQuery("UPDATE mcp_oauth_pending SET expires_at = now() - interval '1 second' WHERE user_id = $1", [OLIVE_USER]);
    assert.equal((await app.call('GET', `/v1/mcp/oauth/callback?${lateBack.searchParams}`, { token: OLIVE })).status, 400);
    const refused = await app.call('GET', '/v1/mcp/oauth/callback?error=access_denied&state=x', { token: OLIVE });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /did not authorize: access_denied/);
    await connect(OLIVE, 'olive-at-tracker');
  });

  test('the worker refreshes a token about to expire; a refused refresh asks the person to connect again', async () => {
    tracker.accessTtlSeconds = 30; // under the minute Brigade refreshes ahead
    await connect(OLIVE, 'olive-at-tracker');
    const refreshes = tracker.refreshes;
    // two conversations of hers at once, and a slow provider: one refresh at a time (a second, with the refresh
    // token the first rotated, would be refused and her sign-in lost)
    tracker.refreshDelayMs = 300;
    const both = await Promise.all([askTracker(OLIVE), askTracker(OLIVE)]);
    tracker.refreshDelayMs = 0;
    assert.deepEqual(
      both.map(({ result }) => result.text),
      ['Signed in at the tracker as olive-at-tracker.', 'Signed in at the tracker as olive-at-tracker.'],
      JSON.stringify(both),
    );
    assert.ok(tracker.refreshes > refreshes, 'the token was refreshed');
    assert.equal(tracker.refusedRefreshes, 0, 'no refresh raced another with a rotated refresh token');
    assert.equal(tracker.calls.at(-1)!.token, tracker.grants.at(-1)!.access, 'the call carried the refreshed token');

    tracker.refuseRefresh = true;
    const refused = await askTracker(OLIVE);
    assert.match(refused.result.error, /^Connect tracker again first: its sign-in expired and could not be renewed/);
    assert.equal((await connected(OLIVE)).expired, true);
    tracker.refuseRefresh = false;
    tracker.accessTtlSeconds = 3600;
  });

  test('Disconnect revokes the tokens at the provider and forgets them; the next call asks to connect', async () => {
    await connect(OLIVE, 'olive-at-tracker');
    const grant = tracker.grants.at(-1)!;
    const gone = await app.call('DELETE', '/v1/mcp/servers/tracker/connection', { token: OLIVE });
    assert.deepEqual(gone.body, { disconnected: true, revoked: true });
    assert.ok(tracker.revocations.includes(grant.refresh) && grant.revoked);
    assert.equal((await connected(OLIVE)).connected, false);
    const after = await askTracker(OLIVE);
    assert.match(after.result.error, /^Connect tracker first/);
  });

  test("no token in the model's input, the history (decoded), the logs, the export or the table in the clear", async () => {
    await connect(OLIVE, 'olive-at-tracker');
    const asked = await askTracker(OLIVE);
    assert.equal(asked.result.text, 'Signed in at the tracker as olive-at-tracker.', JSON.stringify(asked));
    const tokens = tracker.allTokens();
    assert.ok(tokens.length >= 8);

    const codec = payloadCodec(app.config, app.pool)!;
    let history = '';
    for (const id of conversations) {
      const recorded = await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory();
      const payloads: Payload[] = [];
      const walk = (node: unknown): void => {
        if (!node || typeof node !== 'object') return;
        if ((node as Payload).data instanceof Uint8Array && (node as Payload).metadata) payloads.push(node as Payload);
        else for (const value of Object.values(node)) walk(value);
      };
      walk(recorded);
      history += JSON.stringify(recorded);
      for (const opened of await codec.decode(payloads)) history += Buffer.from(opened.data ?? []).toString('utf8');
    }
    assert.match(history, /Signed in at the tracker as olive-at-tracker/, 'the decoded history is read');
    const exported = JSON.stringify((await app.call('GET', '/v1/me/export', { token: OLIVE })).body);
    assert.match(exported, /"mcpConnections":\[\{"server":"tracker"/);
    const rows = await app.adminQuery<{ sealed: Buffer }>('SELECT sealed FROM mcp_oauth_tokens WHERE user_id = $1', [OLIVE_USER]);
    assert.equal(rows.length, 1);
    // what the model was sent, every request of the run
    const modelInput = JSON.stringify(fake.requests.map((request) => request.body));
    assert.match(modelInput, /Signed in at the tracker as olive-at-tracker/);
    for (const token of tokens) {
      assert.ok(!modelInput.includes(token), "a token in the model's input");
      assert.ok(!history.includes(token), 'a token in the history');
      assert.ok(!log.includes(token), 'a token in the logs');
      assert.ok(!exported.includes(token), 'a token in the export');
      assert.ok(!rows[0]!.sealed.includes(Buffer.from(token)), 'a token stored in the clear');
    }
  });

  test("a person's session with the server ends once idle, and the next use opens another", async () => {
    const servers = parseMcpConfig(
      JSON.stringify({ mcpServers: { tracker: { url: tracker.url, auth: 'oauth', agents: ['support'] } } }),
      builtInCatalog(),
    );
    const oauth = { vault: new TokenVault(app.pool, app.config), redirectUrl: `${app.baseUrl}/mcp/oauth/callback` };
    const mcp = new McpConnections(servers, oauth, { idleMs: 300, sweepEveryMs: 0 });
    try {
      const opened = tracker.sessionsOpened;
      const ended = tracker.sessionsEnded;
      await mcp.listTools('tracker', OLIVE_USER);
      await mcp.listTools('tracker', OLIVE_USER);
      assert.equal(tracker.sessionsOpened, opened + 1, 'used again at once: the same session');
      await new Promise((resolve) => setTimeout(resolve, 400));
      await mcp.listTools('tracker', OLIVE_USER);
      assert.equal(tracker.sessionsOpened, opened + 2, 'idle past its time: a new session');
      for (const deadline = Date.now() + 5_000; tracker.sessionsEnded === ended && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(tracker.sessionsEnded, ended + 1, 'the idle session was ended at the server');
    } finally {
      await mcp.close();
    }
  });

  test("erasure revokes the person's tokens at the provider and deletes them", async () => {
    const grant = tracker.grants.at(-1)!;
    assert.equal(grant.subject, 'olive-at-tracker');
    const erased = await app.call('DELETE', '/v1/me', { token: OLIVE });
    assert.equal(erased.status, 204);
    assert.ok(tracker.revocations.includes(grant.refresh) && grant.revoked, 'revoked at the provider');
    const left = await app.adminQuery('SELECT count(*)::int AS n FROM mcp_oauth_tokens WHERE user_id = $1', [OLIVE_USER]);
    assert.equal(left[0].n, 0);
  });
});
