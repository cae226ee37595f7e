// Payload encryption (issue 35): with keys set, what Temporal stores of a support lookup holds no customer's
// e-mail or name in plain text, nor a failed activity's message; the codec server gives them back to an
// operator and to nobody else; the CLI reads the conversation through it; a new key leaves older
// conversations readable.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config.ts';
import { EncryptionCodec, StaticKeyProvider, sealedWith } from '../../src/protection/payload-codec.ts';
import { rewrapDataKeys } from '../../src/protection/person-keys.ts';
import { dataConverter, devKeyFile, keyProvider, payloadCodec, withDevPayloadKey } from '../../src/protection/data-converter.ts';
import { createWorker } from '../../stack/worker.ts';
import { reply, startFakeGemini } from '../support/fake-gemini.ts';
import { temporalAddress, temporalCliPath, workflowBundlePath } from '../support/harness.ts';
import { ALICE, BOB, OLGA_OPERATOR, type TestApp, serveApi, startTestApp } from '../support/test-app.ts';

const run = promisify(execFile);
const newKey = () => randomBytes(32).toString('base64');
const K1 = newKey();
const K2 = newKey();
const UI = 'http://127.0.0.1:8233';

// What a lookup of priya123 shows: the customer's name and e-mail, and her username in the user's own words.
const SECRETS = ['priya@candy.com', 'Priya Patel', 'priya123'];

let app: TestApp;
before(async () => {
  app = await startTestApp({
    env: { PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: K1 }), PAYLOAD_ENCRYPTION_KEY_ID: 'k1', TEMPORAL_UI_URL: UI },
  });
});
after(async () => app?.stop());

async function lookup(target: TestApp | { call: TestApp['call'] }): Promise<string> {
  // the title travels too (memo, the workflow's summary): it names her
  const created = await target.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'Help for Priya Patel' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const turn = await target.call('POST', `/v1/conversations/${created.body.id}/messages`, {
    body: { text: 'Show me everything about customer priya123' },
  });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  const tool = turn.body.messages.find((message: { role: string }) => message.role === 'tool');
  assert.equal(tool.result.user_info.email, 'priya@candy.com', 'the API still answers in plain words');
  return created.body.workflowId;
}

/** The history as Temporal stores and serves it, without any codec: the raw service call, as bytes. */
async function rawHistory(workflowId: string, client = app.client): Promise<{ bytes: Buffer; payloads: Payload[] }> {
  const response = await client.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } });
  const history = response.history!;
  const payloads: Payload[] = [];
  const walk = (value: unknown) => {
    if (!value || typeof value !== 'object') return;
    if (value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    if (record.metadata && typeof record.metadata === 'object' && 'data' in record) payloads.push(record as Payload);
    for (const child of Object.values(record)) walk(child);
  };
  walk(history);
  return { bytes: Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish()), payloads };
}

const codecCall = (action: 'decode' | 'encode', payloads: Payload[], token?: string, headers: Record<string, string> = {}) =>
  app.call('POST', `/codec/${action}`, {
    token: token ?? '',
    headers: { 'X-Namespace': 'default', ...headers },
    body: {
      payloads: payloads.map((payload) => ({
        metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
        data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
      })),
    },
  });

describe('a support lookup with the codec on', () => {
  let workflowId: string;
  let sealed: Payload[];
  before(async () => {
    workflowId = await lookup(app);
  });

  test('leaves no customer e-mail or name in the history Temporal keeps', async () => {
    const { bytes, payloads } = await rawHistory(workflowId);
    for (const secret of SECRETS) assert.equal(bytes.includes(secret), false, `"${secret}" is in the stored history`);
    sealed = payloads.filter((payload) => sealedWith(payload) !== undefined);
    assert.ok(sealed.length >= 3, `the history holds sealed payloads (${sealed.length} of ${payloads.length})`);
    const plain = payloads.filter((payload) => sealedWith(payload) === undefined);
    assert.deepEqual(
      plain.map((payload) => Buffer.from(payload.data ?? []).toString()).filter((text) => /priya/i.test(text)),
      [],
    );
    // one key seals the conversation: its person's data key (issue 42), not the deployment's
    const ids = new Set(sealed.map(sealedWith));
    assert.equal(ids.size, 1, [...ids].join(', '));
    assert.match([...ids][0]!, /^person:/);
  });

  test('the codec server decodes for an operator, and for nobody else', async () => {
    const decoded = await codecCall('decode', sealed, OLGA_OPERATOR);
    assert.equal(decoded.status, 200, JSON.stringify(decoded.body));
    const text = decoded.body.payloads.map((payload: { data: string }) => Buffer.from(payload.data, 'base64').toString()).join('\n');
    assert.ok(text.includes('priya@candy.com') && text.includes('Priya Patel'), 'the operator reads the lookup');
    assert.equal(decoded.body.payloads[0].metadata.encoding, Buffer.from('json/plain').toString('base64'));

    const anonymous = await codecCall('decode', sealed);
    assert.equal(anonymous.status, 401);
    assert.ok(!JSON.stringify(anonymous.body).includes('priya'));
    assert.equal((await codecCall('decode', sealed, 'not-a-token-of-anyone-at-all')).status, 401);
    for (const token of [ALICE, BOB]) {
      const refused = await codecCall('decode', sealed, token);
      assert.equal(refused.status, 403, 'a token without the operator role');
      assert.ok(!JSON.stringify(refused.body).includes('priya'));
    }
    assert.equal((await codecCall('decode', sealed, OLGA_OPERATOR, { 'X-Namespace': 'elsewhere' })).status, 404);
  });

  test('encode seals what the CLI sends, and decode opens it again', async () => {
    const plain: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"a signal"') };
    const encoded = await codecCall('encode', [plain], OLGA_OPERATOR);
    assert.equal(encoded.status, 200);
    assert.equal(Buffer.from(encoded.body.payloads[0].metadata.encoding, 'base64').toString(), 'binary/encrypted');
    const back = await app.call('POST', '/codec/decode', { token: OLGA_OPERATOR, body: encoded.body });
    assert.equal(Buffer.from(back.body.payloads[0].data, 'base64').toString(), '"a signal"');
    assert.equal((await codecCall('encode', [plain], BOB)).status, 403);
  });

  test('the Web UI origin gets CORS for the codec server, without credentials; others get none', async () => {
    const preflight = (origin: string) =>
      fetch(`${app.baseUrl}/codec/decode`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,content-type,x-namespace',
        },
      });
    const ui = await preflight(UI);
    assert.equal(ui.status, 204);
    assert.equal(ui.headers.get('access-control-allow-origin'), UI);
    assert.match(ui.headers.get('access-control-allow-headers') ?? '', /Authorization.*X-Namespace/);
    // a bearer token is the only way in (issue 42): no cookie is taken, so no credentials are allowed either
    assert.equal(ui.headers.get('access-control-allow-credentials'), null);
    const withToken = await fetch(`${app.baseUrl}/codec/decode`, {
      method: 'POST',
      headers: { Origin: UI, Authorization: `Bearer ${OLGA_OPERATOR}`, 'Content-Type': 'application/json' },
      body: '{"payloads":[]}',
    });
    assert.equal(withToken.status, 200);
    assert.equal(withToken.headers.get('access-control-allow-origin'), UI);
    assert.equal(withToken.headers.get('access-control-allow-credentials'), null);
    // another origin is refused before any token is read
    const refused = await preflight('http://evil.example');
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
  });

  test('`temporal workflow show` reads the conversation through the codec server with an operator token only', async () => {
    // --output json keeps payloads as protos: their data is base64, decoded here to read what the CLI holds
    const cli = async (...extra: string[]) => {
      const out = await run(
        temporalCliPath(),
        [
          'workflow',
          'show',
          '--address',
          temporalAddress(),
          '--namespace',
          'default',
          '--workflow-id',
          workflowId,
          '--output',
          'json',
          ...extra,
        ],
        { maxBuffer: 64 * 1024 * 1024 },
      ).then(
        ({ stdout }) => stdout,
        (error: { stdout?: string }) => error.stdout ?? '',
      );
      const texts: string[] = [out];
      const walk = (value: unknown) => {
        if (!value || typeof value !== 'object') return;
        const record = value as Record<string, unknown>;
        if (typeof record.data === 'string' && record.metadata) texts.push(Buffer.from(record.data, 'base64').toString());
        for (const child of Object.values(record)) walk(child);
      };
      try {
        walk(JSON.parse(out));
      } catch {
        // not JSON: the text itself is what it shows
      }
      return texts.join('\n');
    };
    const without = await cli();
    assert.ok(
      without.includes('binary/encrypted') || without.includes(Buffer.from('binary/encrypted').toString('base64')),
      'the CLI showed the history',
    );
    assert.ok(!without.includes('priya@candy.com'), 'without the codec the CLI shows ciphertext');
    const withCodec = await cli('--codec-endpoint', `${app.baseUrl}/codec`, '--codec-auth', `Bearer ${OLGA_OPERATOR}`);
    assert.ok(withCodec.includes('priya@candy.com'), 'through the codec server the operator reads the e-mail');
    const refused = await cli('--codec-endpoint', `${app.baseUrl}/codec`, '--codec-auth', `Bearer ${BOB}`);
    assert.ok(!refused.includes('priya@candy.com'), 'a token without the operator role reads nothing');

    // the command as docs/operations.md gives it: text output, --detailed, within the CLI's own 10 s
    const started = Date.now();
    const { stdout } = await run(
      temporalCliPath(),
      ['workflow', 'show', '--address', temporalAddress(), '--workflow-id', workflowId, '--detailed'].concat([
        '--codec-endpoint',
        `${app.baseUrl}/codec`,
        '--codec-auth',
        `Bearer ${OLGA_OPERATOR}`,
      ]),
      { maxBuffer: 64 * 1024 * 1024, timeout: 10_000 },
    );
    assert.ok(stdout.includes('priya@candy.com'), 'the documented command shows the decoded conversation');
    assert.ok(Date.now() - started < 10_000);
  });
});

test("a failed activity's message is sealed in the history, still reaches the user, and decodes for an operator", async () => {
  const fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  const gemini = await startTestApp({
    env: {
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: K1 }),
      PAYLOAD_ENCRYPTION_KEY_ID: 'k1',
      GEMINI_API_KEY: 'test-gemini-key',
      GEMINI_BASE_URL: fake.baseUrl,
    },
  });
  try {
    // a 400 is not retried: the model step fails with the provider's words, which here quote the customer
    const said = 'no customer record matches priya@candy.com (Priya Patel)';
    fake.script(reply.error(400, said));
    const created = await gemini.call('POST', '/v1/conversations', { body: { agent: 'support' } });
    assert.equal(created.status, 201);
    const turn = await gemini.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Hello' } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.match(turn.body.messages.at(-1).text, /The model could not answer \(Gemini API error 400: .*priya@candy\.com/);

    const response = await gemini.client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: created.body.workflowId },
    });
    // the model step is a local activity: its failure is in its marker
    const failed = response.history!.events!.find(
      (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity' && event.markerRecordedEventAttributes.failure,
    )!;
    assert.ok(failed, 'the model step failed in the history');
    const failure = failed.markerRecordedEventAttributes!.failure!;
    assert.equal(failure.message, 'Encoded failure');
    assert.equal(failure.stackTrace, '');
    assert.match(sealedWith(failure.encodedAttributes as Payload)!, /^person:/);
    const bytes = Buffer.from(proto.temporal.api.history.v1.History.encode(response.history!).finish());
    for (const secret of ['priya@candy.com', 'Priya Patel'])
      assert.equal(bytes.includes(secret), false, `"${secret}" is in the stored history`);

    const decode = (token: string) =>
      fetch(`${gemini.baseUrl}/codec/decode`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-namespace': 'default' },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(
                Object.entries(failure.encodedAttributes!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
              ),
              data: Buffer.from(failure.encodedAttributes!.data!).toString('base64'),
            },
          ],
        }),
      });
    const operator = await decode(OLGA_OPERATOR);
    assert.equal(operator.status, 200);
    const [opened] = ((await operator.json()) as { payloads: { data: string }[] }).payloads;
    const attributes = JSON.parse(Buffer.from(opened!.data, 'base64').toString()) as { message: string; stack_trace: string };
    assert.match(attributes.message, /Gemini API error 400: .*no customer record matches priya@candy\.com \(Priya Patel\)/);
    assert.equal((await decode(BOB)).status, 403);
  } finally {
    await gemini.stop();
    await fake.close();
  }
});

test('control: with PAYLOAD_ENCRYPTION=off (as before issue 35) the same check finds her e-mail and name in the history', async () => {
  const plain = await startTestApp({ env: { PAYLOAD_ENCRYPTION: 'off' } });
  try {
    const { bytes, payloads } = await rawHistory(await lookup(plain), plain.client);
    assert.ok(bytes.includes('priya@candy.com') && bytes.includes('Priya Patel'), 'the check sees plain text where there is some');
    assert.equal(payloads.filter((payload) => sealedWith(payload)).length, 0);
  } finally {
    await plain.stop();
  }
});

test('a key rotation re-wraps the data keys: old conversations stay readable, and no payload is sealed again', async () => {
  const workflowId = await lookup(app);
  const conversationId = workflowId.replace(/^conversation-/, '');
  // every process rolls to k2 as the current key, keeping k1 to read with
  await app.stopWorker();
  const rotated = {
    ...app.config,
    ...loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: K1, k2: K2 }), PAYLOAD_ENCRYPTION_KEY_ID: 'k2' }),
    DATABASE_URL: app.config.DATABASE_URL,
    TEMPORAL_ADDRESS: app.config.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: app.taskQueue,
  };
  const connection = await Connection.connect({ address: temporalAddress() });
  // the persons' data keys, wrapped by k1 until now, are re-wrapped by k2 (docs/operations.md#key-rotation)
  assert.ok((await rewrapDataKeys(app.pool, keyProvider(rotated)!)).rewrapped >= 1);
  const client = new Client({ connection, namespace: 'default', dataConverter: dataConverter(rotated, app.pool) });
  const workerConnection = await NativeConnection.connect({ address: temporalAddress() });
  const worker = await createWorker({
    catalog: app.catalog,
    config: rotated,
    connection: workerConnection,
    pool: app.pool,
    workflowBundlePath: workflowBundlePath(),
  });
  const running = worker.run();
  const { server, baseUrl } = await serveApi({
    catalog: app.catalog,
    config: rotated,
    client,
    pool: app.pool,
    connection,
    codec: payloadCodec(rotated, app.pool),
  });
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    // the old conversation goes on: the new worker replays its k1 history, and answers sealed with k2
    const turn = await call('POST', `/v1/conversations/${conversationId}/messages`, { text: 'Look up john@gmail.com' });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.ok(JSON.stringify(turn.body.messages).includes('john@gmail.com'));
    const whole = await call('GET', `/v1/conversations/${conversationId}`);
    assert.ok(JSON.stringify(whole.body).includes('priya@candy.com'), 'the earlier turn reads back');
    const { payloads, bytes } = await rawHistory(workflowId);
    const ids = [...new Set(payloads.map(sealedWith).filter(Boolean))];
    assert.equal(ids.length, 1, "old and new payloads name the person's data key");
    const [wrapping] = await app.adminQuery('SELECT wrapping_key_id FROM person_data_keys WHERE key_id = $1', [ids[0]]);
    assert.equal(wrapping.wrapping_key_id, 'k2', 'which k2 wraps now');
    assert.equal(bytes.includes('john@gmail.com'), false);
    // the codec server with both keys opens both
    const operator = await fetch(`${baseUrl}/codec/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OLGA_OPERATOR}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        payloads: payloads
          .filter((payload) => sealedWith(payload))
          .map((payload) => ({
            metadata: Object.fromEntries(Object.entries(payload.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
            data: Buffer.from(payload.data!).toString('base64'),
          })),
      }),
    });
    const decoded = JSON.stringify(
      ((await operator.json()) as any).payloads.map((payload: { data: string }) => Buffer.from(payload.data, 'base64').toString()),
    );
    assert.ok(decoded.includes('priya@candy.com') && decoded.includes('john@gmail.com'));
  } finally {
    worker.shutdown();
    await running;
    server.closeAllConnections();
    server.close();
    await workerConnection.close();
    await connection.close();
  }
});

describe('the codec', () => {
  test('passes through payloads it did not seal (recorded histories), and refuses a tampered or unknown-key one', async () => {
    const codec = new EncryptionCodec(new StaticKeyProvider({ a: Buffer.from(K1, 'base64') }, 'a'));
    const plain: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"x":1}') };
    assert.deepEqual(await codec.decode([plain]), [plain]);
    const [sealed] = await codec.encode([plain]);
    assert.equal(Buffer.from(sealed!.data!).includes('"x"'), false);
    const [opened] = await codec.decode([sealed!]);
    assert.equal(Buffer.from(opened!.data!).toString(), '{"x":1}');
    assert.equal(Buffer.from(opened!.metadata!.encoding!).toString(), 'json/plain');
    const tampered = { ...sealed!, data: Buffer.from(sealed!.data!).map((byte, index) => (index === 20 ? byte ^ 1 : byte)) };
    await assert.rejects(codec.decode([tampered]));
    const relabelled = { ...sealed!, metadata: { ...sealed!.metadata, 'encryption-key-id': Buffer.from('b') } };
    const both = new EncryptionCodec(new StaticKeyProvider({ a: Buffer.from(K1, 'base64'), b: Buffer.from(K1, 'base64') }, 'a'));
    await assert.rejects(both.decode([relabelled]), 'the key id is bound to the ciphertext');
    const other = new EncryptionCodec(new StaticKeyProvider({ c: Buffer.from(K2, 'base64') }, 'c'));
    await assert.rejects(other.decode([sealed!]), /no payload encryption key "a"/);
  });

  test('a recorded (unencrypted) history replays on a worker with the codec', async () => {
    const bytes = await fs.readFile(new URL('../histories/lookup-and-chat.binpb', import.meta.url));
    const history = proto.temporal.api.history.v1.History.decode(bytes);
    const config = loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: K1 }) });
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: workflowBundlePath() }, dataConverter: dataConverter(config) },
      history,
      'conversation-recorded',
    );
  });

  test('npm start alone keeps one dev key outside DATA_DIR (0600), the same across restarts; an old DATA_DIR/payload-key moves out', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-devkey-'));
    const keys = path.join(dir, 'config', 'brigade', 'keys');
    const dataDir = path.join(dir, 'data');
    try {
      const first = await withDevPayloadKey(loadConfig({}), dataDir, keys);
      const second = await withDevPayloadKey(loadConfig({}), dataDir, keys);
      assert.equal(first.PAYLOAD_ENCRYPTION_KEY_ID, 'dev');
      assert.deepEqual(second.PAYLOAD_ENCRYPTION_KEYS, first.PAYLOAD_ENCRYPTION_KEYS);
      const file = devKeyFile(dataDir, keys);
      assert.equal(path.dirname(file), keys);
      assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
      assert.equal((await fs.stat(keys)).mode & 0o777, 0o700);
      // a copy of DATA_DIR holds no key, only its fingerprint
      assert.deepEqual(await fs.readdir(dataDir), ['payload-key.fingerprint']);
      const fingerprint = (await fs.readFile(path.join(dataDir, 'payload-key.fingerprint'), 'utf8')).trim();
      assert.match(fingerprint, /^[0-9a-f]{16}$/);
      assert.equal(JSON.stringify(first.PAYLOAD_ENCRYPTION_KEYS).includes(fingerprint), false);
      // DATA_DIR moved (another path, another key file): the start stops rather than make a key that opens nothing
      const movedDir = path.join(dir, 'moved');
      await fs.cp(dataDir, movedDir, { recursive: true });
      await assert.rejects(withDevPayloadKey(loadConfig({}), movedDir, keys), /was sealed with the dev key of fingerprint/);
      const [sealed] = await payloadCodec(first)!.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') }]);
      assert.equal(Buffer.from((await payloadCodec(second)!.decode([sealed!]))[0]!.data!).toString(), '"x"');
      assert.equal((await withDevPayloadKey(loadConfig({ PAYLOAD_ENCRYPTION: 'off' }), dataDir, keys)).PAYLOAD_ENCRYPTION_KEYS, undefined);
      await assert.rejects(
        withDevPayloadKey(loadConfig({ DATABASE_URL: 'postgres://x/y' }), dataDir, keys),
        /PAYLOAD_ENCRYPTION_KEYS: required/,
      );

      // an earlier version's key in DATA_DIR moves out, and still opens what it sealed
      const oldDataDir = path.join(dir, 'old');
      await fs.mkdir(oldDataDir);
      const oldKey = randomBytes(32);
      await fs.writeFile(path.join(oldDataDir, 'payload-key'), `${oldKey.toString('base64')}\n`, { mode: 0o644 });
      const moved = await withDevPayloadKey(loadConfig({}), oldDataDir, keys);
      assert.deepEqual(Buffer.from(moved.PAYLOAD_ENCRYPTION_KEYS!.dev!), oldKey);
      await assert.rejects(fs.stat(path.join(oldDataDir, 'payload-key')), { code: 'ENOENT' });
      assert.equal((await fs.stat(devKeyFile(oldDataDir, keys))).mode & 0o777, 0o600);
      // two different keys: neither is dropped, the start stops and says which
      await fs.writeFile(path.join(oldDataDir, 'payload-key'), `${randomBytes(32).toString('base64')}\n`);
      await assert.rejects(withDevPayloadKey(loadConfig({}), oldDataDir, keys), /hold different keys/);
      await fs.rm(path.join(oldDataDir, 'payload-key'));

      await fs.writeFile(file, 'damaged');
      await assert.rejects(
        withDevPayloadKey(loadConfig({}), dataDir, keys),
        /does not hold a base64 256-bit key/,
        'a damaged key is not silently replaced',
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('production settings without keys are an error that names the fix; PAYLOAD_ENCRYPTION=off or dev settings are not', () => {
    assert.throws(() => keyProvider(loadConfig({ DATABASE_URL: 'postgres://x/y' })), /PAYLOAD_ENCRYPTION_KEYS: required/);
    assert.throws(() => keyProvider(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233' })), /PAYLOAD_ENCRYPTION=off/);
    assert.equal(keyProvider(loadConfig({ DATABASE_URL: 'postgres://x/y', PAYLOAD_ENCRYPTION: 'off' })), undefined);
    assert.equal(keyProvider(loadConfig({})), undefined);
    assert.throws(
      () => keyProvider(loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ a: K1, b: K2 }) })),
      /PAYLOAD_ENCRYPTION_KEY_ID: required/,
    );
    assert.throws(
      () => keyProvider(loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ a: K1 }), PAYLOAD_ENCRYPTION_KEY_ID: 'z' })),
      /not a key id/,
    );
    const bad = 'c2hvcnQ=';
    assert.throws(
      () => loadConfig({ PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ a: bad }) }),
      (error: Error) => /key "a" must be the base64 of 32/.test(error.message) && !error.message.includes(bad),
    );
  });
});
