// Bad input through the HTTP API, as a hostile client sends it: every class is a 4xx with a JSON error that
// says what to change, never a 500, a lost message or a silently dropped request.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { createApp } from '../../src/api/app.ts';
import { createPool } from '../../src/db/pool.ts';
import { decisionSignal } from '../../src/shared/definitions.ts';
import { freshDatabase } from '../support/harness.ts';
import { rawRequest, type RawResponse } from '../support/raw-http.ts';
import { waitUntilIdle } from '../support/scenarios.ts';
import { readSse } from '../support/sse.ts';
import { ALICE, CAROL, TOKENS, type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

const auth = (token = ALICE) => ({ authorization: `Bearer ${token}` });
const JSON_HEADERS = { ...auth(), 'content-type': 'application/json' };
const send = (method: string, path: string, options: { headers?: Record<string, string>; body?: string | Buffer } = {}) =>
  rawRequest(app.baseUrl, method, path, options);

/** A 4xx with a JSON `{ error }` that is a sentence, not an internal. */
function assertClientError(response: RawResponse, status: number, pattern?: RegExp): void {
  assert.equal(response.status, status, `${response.status} ${response.text.slice(0, 300)}`);
  assert.equal(typeof response.json?.error, 'string', response.text.slice(0, 300));
  if (pattern) assert.match(response.json.error, pattern);
  assert.doesNotMatch(response.json.error, /Internal error|invalid byte sequence|stack|at \w+ \(/);
}

async function newConversation(token = ALICE): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'support' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

async function parkedApproval(): Promise<{ id: string; pendingId: string }> {
  const id = await newConversation();
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'cancel order 13579' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return { id, pendingId: turn.body.pending[0].id };
}

describe('1. bodies the API cannot take are 413, 415 or 400, never 500', () => {
  test('a body over 256 KB is 413 and says the limit', async () => {
    const body = JSON.stringify({ agent: 'support', title: 'x'.repeat(300 * 1024) });
    const response = await send('POST', '/v1/conversations', { headers: JSON_HEADERS, body });
    assertClientError(response, 413, /larger than 256 KB/);
  });

  test('a charset other than UTF-8 is 415 and names UTF-8', async () => {
    for (const charset of ['latin1', 'utf-16', 'klingon']) {
      const response = await send('POST', '/v1/conversations', {
        headers: { ...auth(), 'content-type': `application/json; charset=${charset}` },
        body: '{"agent":"support"}',
      });
      assertClientError(response, 415, /UTF-8/);
    }
    const utf8 = await send('POST', '/v1/conversations', {
      headers: { ...auth(), 'content-type': 'application/json; charset=UTF-8' },
      body: '{"agent":"support"}',
    });
    assert.equal(utf8.status, 201);
  });

  test('an unknown Content-Encoding is 415; one that lies about the body is 400', async () => {
    const unknown = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, 'content-encoding': 'snappy' },
      body: '{"agent":"support"}',
    });
    assertClientError(unknown, 415, /gzip, deflate or br/);
    const lying = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
      body: '{"agent":"support"}',
    });
    assertClientError(lying, 400, /not valid gzip/);
    const honest = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
      body: gzipSync('{"agent":"support"}'),
    });
    assert.equal(honest.status, 201, honest.text);
  });

  test('a compressed body that inflates far past the limit is 413', async () => {
    const bomb = gzipSync(`{"agent":"support","title":"${' '.repeat(20 * 1024 * 1024)}"}`);
    assert.ok(bomb.length < 64 * 1024, 'the compressed body itself is small');
    const response = await send('POST', '/v1/conversations', { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: bomb });
    assertClientError(response, 413, /once decompressed/);
  });

  test('JSON with a wrong or missing content type is 415, not "field missing"', async () => {
    const id = await newConversation();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const headers: Record<string, string> = { ...auth() };
      if (type) headers['content-type'] = type;
      const created = await send('POST', '/v1/conversations', { headers, body: '{"agent":"support"}' });
      assertClientError(created, 415, /Content-Type: application\/json/);
      const said = await send('POST', `/v1/conversations/${id}/messages`, { headers, body: '{"text":"hello"}' });
      assertClientError(said, 415, /Content-Type: application\/json/);
    }
  });

  test('malformed JSON is still 400', async () => {
    const response = await send('POST', '/v1/conversations', { headers: JSON_HEADERS, body: '{"agent":' });
    assertClientError(response, 400, /not valid JSON/);
  });
});

describe('2. a malformed percent-encoding in a path is 400', () => {
  for (const suffix of ['', '/messages', '/decisions', '/events']) {
    test(`/v1/conversations/%ZZ${suffix}`, async () => {
      const method = suffix === '/messages' || suffix === '/decisions' ? 'POST' : 'GET';
      const response = await send(method, `/v1/conversations/%ZZ${suffix}`, {
        headers: JSON_HEADERS,
        body: method === 'POST' ? '{"text":"hi"}' : undefined,
      });
      assertClientError(response, 400, /percent-encoding/);
      assert.ok(!response.text.includes('%ZZ'), 'the error does not repeat the path');
    });
  }
});

describe('3. text PostgreSQL cannot store is refused with 400 naming the field', () => {
  const NUL = 'a\u0000b';
  const SURROGATE = 'smile \ud83d';

  test('a NUL in a title', async () => {
    const response = await send('POST', '/v1/conversations', {
      headers: JSON_HEADERS,
      body: JSON.stringify({ agent: 'support', title: NUL }),
    });
    assertClientError(response, 400, /title: must not contain NUL/);
    assert.equal(response.json.fields[0].field, 'title');
  });

  test("a NUL or a lone surrogate in a message's text, promptly, and the conversation goes on", async () => {
    const id = await newConversation();
    for (const text of [NUL, SURROGATE]) {
      const started = Date.now();
      const response = await send('POST', `/v1/conversations/${id}/messages`, { headers: JSON_HEADERS, body: JSON.stringify({ text }) });
      assertClientError(response, 400, /text: must not contain NUL \(\\u0000\) or unpaired surrogate/);
      assert.ok(Date.now() - started < 2_000, 'refused at once, not after the model gave up');
    }
    const fine = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'status of order 24601 😀' } });
    assert.equal(fine.status, 200);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(
      view.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text),
      ['status of order 24601 😀'],
    );
    assert.ok(!JSON.stringify(view.body).includes('invalid byte sequence'));
  });

  test('in a rejection reason, a choice, a pending id, and any string or key deep inside edited args', async () => {
    const { id, pendingId } = await parkedApproval();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ pendingId, decision: 'reject', reason: NUL }, 'reason'],
      [{ pendingId, decision: 'reject', reason: SURROGATE }, 'reason'],
      [{ pendingId, decision: 'yes', choice: NUL }, 'choice'],
      [{ pendingId: `${pendingId}\u0000`, decision: 'approve' }, 'pendingId'],
      [{ pendingId, decision: 'edit', args: { order_id: '13579', note: { deep: [1, NUL] } } }, 'args.note.deep.1'],
      [{ pendingId, decision: 'edit', args: { order_id: '13579', [`k${'\u0000'}`]: 1 } }, 'args'],
    ];
    for (const [body, field] of cases) {
      const response = await send('POST', `/v1/conversations/${id}/decisions`, { headers: JSON_HEADERS, body: JSON.stringify(body) });
      assertClientError(response, 400, /must not contain NUL/);
      assert.equal(response.json.fields[0].field, field);
    }
    const deep = `${'['.repeat(50_000)}"leaf"${']'.repeat(50_000)}`;
    const tooDeep = await send('POST', `/v1/conversations/${id}/decisions`, {
      headers: JSON_HEADERS,
      body: `{"pendingId":${JSON.stringify(pendingId)},"decision":"edit","args":{"order_id":"13579","deep":${deep}}}`,
    });
    assertClientError(tooDeep, 400, /nest deeper than 16/);

    // The item is still pending and a clean rejection gives the call its result.
    const rejected = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      body: { pendingId, decision: 'reject', reason: 'not now' },
    });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    const tool = rejected.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.match(tool.result.error, /not now/);
  });

  test('a signal with such a reason is recorded as rejected, and the call keeps waiting for a decision', async () => {
    const { id, pendingId } = await parkedApproval();
    const handle = app.client.workflow.getHandle(`conversation-${id}`);
    await handle.signal(decisionSignal, { pendingId, decision: 'reject', reason: NUL });
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.body.status, 'waiting');
    assert.equal(view.body.pending[0]?.id, pendingId);
    await handle.signal(decisionSignal, { pendingId, decision: 'reject', reason: 'declined' });
    await waitUntilIdle(app, id);
    const after = await app.call('GET', `/v1/conversations/${id}`);
    const tool = after.body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.match(tool.result.error, /declined/);
    // The refused signal is on record (written with the turn's next batch), its payload made storable.
    const events = await readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
      token: ALICE,
      until: (seen) => seen.some((e) => e.event === 'signal.rejected'),
    });
    const rejected = events.find((e) => e.event === 'signal.rejected');
    assert.ok(rejected, 'signal.rejected was recorded');
    assert.match(rejected.data.data.reason, /reason: must not contain NUL/);
  });
});

describe('4 and 5. Idempotency-Key', () => {
  test('on POST /v1/conversations: the same key twice (even at once) is one conversation', async () => {
    const title = `idem-${Date.now()}`;
    const create = () =>
      send('POST', '/v1/conversations', {
        headers: { ...JSON_HEADERS, 'Idempotency-Key': `create-${title}` },
        body: JSON.stringify({ agent: 'support', title }),
      });
    const [a, b, c] = await Promise.all([create(), create(), create()]);
    const later = await create();
    for (const response of [a, b, c, later]) assert.equal(response.status, 201, response.text);
    assert.equal(new Set([a, b, c, later].map((r) => r.json.id)).size, 1);
    assert.equal(later.headers['idempotent-replayed'], 'true');
    const list = await app.call('GET', '/v1/conversations');
    assert.equal(list.body.conversations.filter((row: { title: string }) => row.title === title).length, 1);
    // Keys are per user: another user's same key is a conversation of their own.
    const carol = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, ...auth(CAROL), 'Idempotency-Key': `create-${title}` },
      body: JSON.stringify({ agent: 'support', title }),
    });
    assert.equal(carol.status, 201);
    assert.notEqual(carol.json.id, a.json.id);
  });

  test('the same key with a different body is 422 on create, and nothing is created', async () => {
    const key = `create-diff-${Date.now()}`;
    const first = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, 'Idempotency-Key': key },
      body: JSON.stringify({ agent: 'support', title: 'one' }),
    });
    assert.equal(first.status, 201);
    // Key order does not make a body different.
    const reordered = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, 'Idempotency-Key': key },
      body: '{"title":"one","agent":"support"}',
    });
    assert.equal(reordered.json.id, first.json.id);
    const second = await send('POST', '/v1/conversations', {
      headers: { ...JSON_HEADERS, 'Idempotency-Key': key },
      body: JSON.stringify({ agent: 'support', title: 'two' }),
    });
    assertClientError(second, 422, /Idempotency-Key was already used with a different request/);
    const list = await app.call('GET', '/v1/conversations');
    assert.ok(!list.body.conversations.some((row: { title: string }) => row.title === 'two'));
  });

  test('the same key with a different message is 422, not the first outcome; the transcript has one message', async () => {
    const id = await newConversation();
    const post = (text: string, key = 'turn-a') =>
      send('POST', `/v1/conversations/${id}/messages`, {
        headers: { ...JSON_HEADERS, 'Idempotency-Key': key },
        body: JSON.stringify({ text }),
      });
    const first = await post('status of order 24601');
    assert.equal(first.status, 200);
    const replay = await post('status of order 24601');
    assert.equal(replay.status, 200);
    assert.deepEqual(replay.json, first.json);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    const different = await post('status of order 13579');
    assertClientError(different, 422, /different request/);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(
      view.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text),
      ['status of order 24601'],
    );
  });

  test('a key used for a message and then for a decision is 422; the same decision retried is its first outcome', async () => {
    const id = await newConversation();
    const turn = await send('POST', `/v1/conversations/${id}/messages`, {
      headers: { ...JSON_HEADERS, 'Idempotency-Key': 'shared' },
      body: JSON.stringify({ text: 'cancel order 47652' }),
    });
    const pendingId = turn.json.pending[0].id;
    const reused = await send('POST', `/v1/conversations/${id}/decisions`, {
      headers: { ...JSON_HEADERS, 'Idempotency-Key': 'shared' },
      body: JSON.stringify({ pendingId, decision: 'reject', reason: 'no' }),
    });
    assertClientError(reused, 422, /different request/);
    const decide = (reason: string) =>
      send('POST', `/v1/conversations/${id}/decisions`, {
        headers: { ...JSON_HEADERS, 'Idempotency-Key': 'decision-1' },
        body: JSON.stringify({ pendingId, decision: 'reject', reason }),
      });
    const decided = await decide('no');
    assert.equal(decided.status, 200, decided.text);
    assert.deepEqual((await decide('no')).json, decided.json);
    assertClientError(await decide('a different reason'), 422, /different request/);
  });
});

describe('6. Last-Event-ID beyond the newest event', () => {
  for (const lastEventId of ['9223372036854775808', '1'.padEnd(40, '0')]) {
    test(`${lastEventId.length} digits: the stream stays open and delivers the next events`, async () => {
      const id = await newConversation();
      const stream = readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
        token: ALICE,
        lastEventId,
        until: (events) => events.some((e) => e.event === 'turn.ended'),
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'status of order 24601' } });
      assert.equal(turn.status, 200);
      const events = await stream;
      assert.ok(
        events.some((e) => e.event === 'message'),
        'the new message arrived',
      );
      assert.ok(
        events.some((e) => e.event === 'turn.ended'),
        'the stream stayed open until the turn ended',
      );
    });
  }
});

describe('8. echoes and edges', () => {
  test('an error repeats at most a little of a long client value', async () => {
    const { id } = await parkedApproval();
    const huge = 'p'.repeat(100_000);
    const response = await send('POST', `/v1/conversations/${id}/decisions`, {
      headers: JSON_HEADERS,
      body: JSON.stringify({ pendingId: huge, decision: 'approve' }),
    });
    assert.ok(response.status === 400 || response.status === 404, response.text.slice(0, 200));
    assert.ok(response.text.length < 1_000, `answered ${response.text.length} bytes`);
    const unknown = 'q'.repeat(190);
    const notFound = await send('POST', `/v1/conversations/${id}/decisions`, {
      headers: JSON_HEADERS,
      body: JSON.stringify({ pendingId: unknown, decision: 'approve' }),
    });
    assertClientError(notFound, 404, /No pending item/);
    assert.ok(!notFound.text.includes(unknown), 'the 404 does not repeat the whole id');
    const type = await send('POST', '/v1/conversations', {
      headers: { ...auth(), 'content-type': `text/${'z'.repeat(5_000)}` },
      body: '{}',
    });
    assertClientError(type, 415);
    assert.ok(type.text.length < 1_000);
  });

  test('every response carries X-Request-Id; a plain one from the client is kept, anything else replaced', async () => {
    const ok = await send('GET', '/v1/conversations', { headers: auth() });
    assert.match(String(ok.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const unauthorized = await send('GET', '/v1/conversations', {});
    assert.ok(unauthorized.headers['x-request-id']);
    const given = await send('GET', '/healthz', { headers: { 'X-Request-Id': 'trace-42.a:b' } });
    assert.equal(given.headers['x-request-id'], 'trace-42.a:b');
    const hostile = await send('GET', '/healthz', { headers: { 'X-Request-Id': 'x'.repeat(500) } });
    assert.notEqual(hostile.headers['x-request-id'], 'x'.repeat(500));
  });
});

/** A second API over its own database, for what needs other settings or a broken database. */
async function serveOwnApi(options: { corsOrigins?: string[]; log?: (line: string, error?: unknown) => void }) {
  const database = await freshDatabase();
  const pool = createPool(database.url);
  const api = createApp({
    config: { ...app.config, CORS_ORIGINS: options.corsOrigins ?? [] },
    client: app.client,
    pool,
    tokens: TOKENS,
    checkTemporal: async () => undefined,
    log: options.log,
  });
  const server: Server = await new Promise((resolve) => {
    const listening = api.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    adminUrl: database.adminUrl,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
      await database.drop();
    },
  };
}

describe('a 500 that remains', () => {
  test('is logged with the request id that the response carries, and the response carries no internals', async () => {
    const lines: Array<{ line: string; error: unknown }> = [];
    const own = await serveOwnApi({ log: (line, error) => lines.push({ line, error }) });
    try {
      const admin = new pg.Client({ connectionString: own.adminUrl });
      await admin.connect();
      await admin.query('REVOKE SELECT ON conversations FROM brigade_app');
      await admin.end();
      const response = await rawRequest(own.baseUrl, 'GET', '/v1/conversations', { headers: auth() });
      assert.equal(response.status, 500);
      const requestId = String(response.headers['x-request-id']);
      assert.deepEqual(response.json, { error: 'Internal error', requestId });
      assert.doesNotMatch(response.text, /permission|conversations|denied/);
      assert.equal(lines.length, 1);
      assert.ok(lines[0]!.line.includes(requestId), lines[0]!.line);
      assert.match(String((lines[0]!.error as Error).message), /permission denied/);
    } finally {
      await own.close();
    }
  });
});

describe('CORS', () => {
  test('none without CORS_ORIGINS', async () => {
    const response = await send('GET', '/v1/conversations', { headers: { ...auth(), origin: 'https://app.example.com' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers['access-control-allow-origin'], undefined);
  });

  test('exactly the configured origins, never a wildcard', async () => {
    const own = await serveOwnApi({ corsOrigins: ['https://app.example.com'] });
    try {
      const allowed = await rawRequest(own.baseUrl, 'GET', '/v1/conversations', {
        headers: { ...auth(), origin: 'https://app.example.com' },
      });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.com');
      assert.equal(allowed.headers['access-control-allow-credentials'], undefined);
      assert.match(String(allowed.headers['access-control-expose-headers']), /X-Request-Id/);
      const preflight = await rawRequest(own.baseUrl, 'OPTIONS', '/v1/conversations', {
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      assert.equal(preflight.status, 204);
      assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
      assert.match(String(preflight.headers['access-control-allow-headers']), /Idempotency-Key/);
      const other = await rawRequest(own.baseUrl, 'GET', '/v1/conversations', {
        headers: { ...auth(), origin: 'https://evil.example.com' },
      });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      const otherPreflight = await rawRequest(own.baseUrl, 'OPTIONS', '/v1/conversations', {
        headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
      });
      assertClientError(otherPreflight, 403, /CORS_ORIGINS/);
      assert.equal(otherPreflight.headers['access-control-allow-origin'], undefined);
    } finally {
      await own.close();
    }
  });
});
