// Fuzzing the API against the real stack: request bodies, path ids, headers and query strings generated
// from the API's own zod schemas (test/support/endpoints.ts) mixed with hostile values. Whatever comes in:
// no 5xx, every error is a JSON body, every accepted message is in its transcript exactly once, and the
// service is still ready afterwards. Bounded in time; the seed is printed so a failure can be replayed
// with FUZZ_SEED=<seed> (FUZZ_RUNS and FUZZ_SECONDS change the budget).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { ENDPOINTS, type EndpointRow } from '../support/endpoints.ts';
import { rawRequest } from '../support/raw-http.ts';
import { arbitraryFor, headerValue, hostileRawBody, hostileSegment, hostileString } from '../support/schema-arbitrary.ts';
import { ALICE, CAROL, type TestApp, startTestApp } from '../support/test-app.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 1_500);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 20);
const CONVERSATIONS = 3;

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

interface FuzzRequest {
  row: EndpointRow;
  conversation: number;
  pathId: string | null;
  params: Record<string, string>;
  body: { json: unknown } | { raw: string | Buffer } | null;
  contentType: string | null;
  encoding: 'identity' | 'gzip' | 'gzip-lie' | 'x-unknown' | 'gzip, br';
  token: 'alice' | 'carol' | 'none';
  idempotencyKey: string | null;
  lastEventId: string | null;
  query: Record<string, string>;
  realPendingId: boolean;
}

function requestFor(row: EndpointRow): fc.Arbitrary<FuzzRequest> {
  const names = [...row.path.matchAll(/:(\w+)/g)].map((match) => match[1]!).filter((name) => name !== 'id');
  const params = fc.record(
    Object.fromEntries(
      names.map((name) => {
        const schema = row.params?.[name];
        const fitting = schema ? arbitraryFor(schema).map((value) => encodeURIComponent(String(value)).slice(0, 2_000)) : fc.uuid();
        return [name, fc.oneof({ weight: 3, arbitrary: fitting }, { weight: 1, arbitrary: hostileSegment })];
      }),
    ),
  ) as fc.Arbitrary<Record<string, string>>;
  const body = row.body
    ? fc.oneof(
        { weight: 8, arbitrary: arbitraryFor(row.body).map((json) => ({ json })) },
        { weight: 1, arbitrary: hostileRawBody.map((raw) => ({ raw })) },
      )
    : fc.option(
        hostileRawBody.map((raw) => ({ raw })),
        { freq: 6 },
      );
  const query = fc.record(
    Object.fromEntries(
      Object.entries(row.query ?? {}).map(([name, schema]) => [
        name,
        // each value at most 2 000 characters: a query string beyond Node's header limit is reset, not answered
        fc.oneof(
          arbitraryFor(schema).map((value) => String(value).slice(0, 2_000)),
          hostileString.map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '')).slice(0, 2_000)),
        ),
      ]),
    ),
    { requiredKeys: [] },
  ) as fc.Arbitrary<Record<string, string>>;
  return fc.record({
    row: fc.constant(row),
    conversation: fc.nat({ max: CONVERSATIONS - 1 }),
    pathId: fc.option(hostileSegment, { freq: 5 }),
    params,
    body,
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constant('application/json') },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          'application/json; charset=utf-8',
          'text/plain',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'application/vnd.api+json',
          'multipart/form-data; boundary=x',
          'application/json; charset="utf-8"',
        ),
      },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
    encoding: fc.oneof(
      { weight: 12, arbitrary: fc.constant('identity' as const) },
      { weight: 1, arbitrary: fc.constantFrom('gzip' as const, 'gzip-lie' as const, 'x-unknown' as const, 'gzip, br' as const) },
    ),
    token: fc.oneof(
      { weight: 12, arbitrary: fc.constant('alice' as const) },
      { weight: 1, arbitrary: fc.constantFrom('carol' as const, 'none' as const) },
    ),
    idempotencyKey: row.headers?.includes('Idempotency-Key')
      ? fc.option(fc.oneof(fc.constantFrom('k1', 'k2', 'k3'), headerValue), { freq: 2 })
      : fc.constant(null),
    lastEventId: row.headers?.includes('Last-Event-ID')
      ? fc.option(fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 80n }).map(String), headerValue), { freq: 2 })
      : fc.constant(null),
    query,
    realPendingId: fc.boolean(),
  });
}

test('hostile input from the schemas never breaks the API', { timeout: 120_000 }, async () => {
  console.log(`api fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}), up to ${RUNS} requests or ${SECONDS} s`);
  const conversations: string[] = [];
  for (let index = 0; index < CONVERSATIONS; index++) {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: `fuzz ${index}` } });
    conversations.push(created.body.id);
  }
  // One conversation starts parked on an approval, so decisions can reach a real pending item.
  const parked = await app.call('POST', `/v1/conversations/${conversations[0]}/messages`, { body: { text: 'cancel order 13579' } });
  const accepted = new Map<string, string[]>(conversations.map((id, index) => [id, index === 0 ? ['cancel order 13579'] : []]));
  const pending = new Map<string, string[]>([[conversations[0]!, parked.body.pending.map((item: { id: string }) => item.id)]]);
  const statuses = new Map<number, number>();
  let requests = 0;

  const property = fc.asyncProperty(fc.constantFrom(...ENDPOINTS).chain(requestFor), async (request) => {
    const { row } = request;
    const conversationId = conversations[request.conversation]!;
    let path = row.path.replace(':id', request.pathId ?? conversationId);
    for (const [name, value] of Object.entries(request.params)) path = path.replace(`:${name}`, value);
    const query = new URLSearchParams(
      Object.entries(request.query).map(([name, value]): [string, string] => [name, decodeURIComponentSafe(value)]),
    ).toString();
    if (query) path += `?${query}`;

    const headers: Record<string, string> = {};
    if (request.token !== 'none') headers.authorization = `Bearer ${request.token === 'alice' ? ALICE : CAROL}`;
    if (request.idempotencyKey !== null) headers['Idempotency-Key'] = request.idempotencyKey;
    if (request.lastEventId !== null) headers['Last-Event-ID'] = request.lastEventId;
    let body: string | Buffer | undefined;
    if (request.body) {
      let json = 'json' in request.body ? request.body.json : undefined;
      const known = pending.get(conversationId) ?? [];
      if (request.realPendingId && known.length && json && typeof json === 'object' && 'pendingId' in json) {
        json = { ...json, pendingId: known[0] };
      }
      body = 'raw' in request.body ? request.body.raw : JSON.stringify(json);
      if (request.contentType) headers['content-type'] = request.contentType;
      if (request.encoding === 'gzip') body = gzipSync(body);
      if (request.encoding !== 'identity') headers['content-encoding'] = request.encoding === 'gzip-lie' ? 'gzip' : request.encoding;
    }

    const response = await rawRequest(app.baseUrl, row.method, path, { headers, body, stream: row.stream, timeoutMs: 20_000 });
    requests += 1;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const what = () => `${row.method} ${path.slice(0, 160)} -> ${response.status} ${response.text.slice(0, 300)}`;
    assert.ok(response.status < 500, what());
    assert.ok(response.headers['x-request-id'], `no X-Request-Id: ${what()}`);
    if (response.status >= 400) {
      assert.match(String(response.headers['content-type']), /^application\/json/, what());
      assert.equal(typeof response.json?.error, 'string', what());
      assert.ok(response.text.length < 4_000, `an error repeats too much (${response.text.length} bytes): ${what()}`);
    }
    if (response.status === 200 && row.method === 'POST' && !request.pathId && request.token === 'alice') {
      if (row.message && response.headers['idempotent-replayed'] !== 'true') {
        const sent = (JSON.parse(typeof body === 'string' ? body : gunzipText(body!, request.encoding)) as Record<string, string>)[
          row.message
        ]!;
        accepted.get(conversationId)!.push(sent.trim());
      }
      if (Array.isArray(response.json?.pending))
        pending.set(
          conversationId,
          response.json.pending.map((item: { id: string }) => item.id),
        );
    }
  });

  await fc.assert(property, {
    seed: SEED,
    numRuns: RUNS,
    interruptAfterTimeLimit: SECONDS * 1_000,
    markInterruptAsFailure: false,
    endOnFailure: true,
  });
  console.log(`api fuzz: ${requests} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);

  for (const id of conversations) {
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.status, 200);
    const stored = view.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
    assert.deepEqual([...stored].sort(), [...accepted.get(id)!].sort(), `conversation ${id}: every accepted message exactly once`);
  }
  const ready = await app.call('GET', '/readyz', { token: '' });
  assert.equal(ready.status, 200, JSON.stringify(ready.body));
});

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The text of a body the API accepted: gunzipped when it was sent compressed. */
function gunzipText(body: Buffer, encoding: string): string {
  return (encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8');
}
