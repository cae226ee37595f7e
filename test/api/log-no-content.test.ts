// Logs hold no content (issue 42): a provider's error that quotes a customer is told to the user and kept in the
// sealed history, but the worker's log says only what kind of failure it was. The worker is the real
// `npm run worker` process, so its log is exactly what an operator's log collector would receive.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { killWorker, startWorkerProcess } from '../support/worker-process.ts';
import { type KitchenHttp, startKitchenHttp } from '../support/mcp-kitchen.ts';
import { describeError, safeLogMeta } from '../../src/shared/log-safe.ts';

const EMAIL = 'priya.marker@candy.example';
const NAME = 'Priya Markerova';

const MCP_MARKER = 'olaf.mcpmarker@pantry.example';

let fake: FakeGemini;
let app: TestApp;
let worker: ChildProcess;
let log = '';
// a real MCP server (the kitchen) behind a proxy that fails every tool call with a body quoting a customer
let kitchen: KitchenHttp;
let broken: http.Server;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-log-'));

before(async () => {
  fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  kitchen = await startKitchenHttp();
  broken = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (body.includes('"tools/call"')) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`internal error while reading the orders of ${MCP_MARKER}`);
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0] !== 'host'),
    );
    const answer = await fetch(kitchen.url, { method: req.method, headers, body: body.length ? body : undefined });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
  const mcpConfig = path.join(dir, 'mcp.json');
  const brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/mcp`;
  fs.writeFileSync(
    mcpConfig,
    JSON.stringify({ mcpServers: { ledger: { url: brokenUrl, agents: ['support'], tools: { lookup_pantry: { approval: 'never' } } } } }),
  );
  const env = { GEMINI_API_KEY: 'test-gemini-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_MAX_ATTEMPTS: '2', BRIGADE_MCP_CONFIG: mcpConfig };
  app = await startTestApp({ worker: false, env });
  worker = await startWorkerProcess(app, env);
  const keep = (chunk: Buffer) => (log += chunk.toString());
  worker.stdout!.on('data', keep);
  worker.stderr!.on('data', keep);
});
after(async () => {
  if (worker) await killWorker(worker);
  await app?.stop();
  await fake?.close();
  broken?.closeAllConnections();
  await new Promise((resolve) => broken?.close(resolve));
  await kitchen?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function waitForLine(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = log.split('\n').find((l) => pattern.test(l));
    if (line) return line;
    if (Date.now() > until) assert.fail(`no log line matched ${pattern}; the log:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("a provider's error quoting a customer reaches the user, and the log says only its kind and status", async () => {
  const said = `no customer record matches ${EMAIL} (${NAME})`;
  // a 400 is not retried; a 503 is, so both the retried attempt's log and the final failure's are seen
  fake.script(reply.error(503, `overloaded while reading ${EMAIL}`), reply.error(400, said));
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  assert.equal(created.status, 201);
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Hello' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  // the user is still told why
  assert.match(turn.body.messages.at(-1).text, new RegExp(`The model could not answer \\(.*${EMAIL.replace(/\./g, '\\.')}`));

  const line = await waitForLine(/Model step failed/);
  assert.match(line, /ModelCallError/, 'the failure is named by its type');
  assert.match(line, /status=400/, 'and its HTTP status');
  assert.match(line, new RegExp(created.body.workflowId), "and the conversation's workflow id");
  await waitForLine(/Activity failed/);
  for (const marker of [EMAIL, NAME, 'Priya', 'candy']) assert.equal(log.includes(marker), false, `the log holds "${marker}":\n${log}`);
});

test("an MCP server's error quoting a customer is not in the log either", async () => {
  const requests = fake.requests.length;
  fake.script(reply.calls({ name: 'ledger__lookup_pantry', args: { ingredient: 'flour' } }), reply.text('The ledger is down.'));
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Orders of Olaf?' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.ok(fake.requests.length > requests, 'the model was asked');
  // the user (through the model) is told the server could not be reached, in the server's words
  const tool = turn.body.messages.find((m: { role: string }) => m.role === 'tool');
  assert.match(JSON.stringify(tool.result), /could not be reached.*olaf\.mcpmarker/);
  // the retried attempts were logged by the SDK as failed activities: the error by its kind and status only
  // (before, the SDK's error object was written as its enumerable fields, whatever a library put in them)
  const failed = await waitForLine(/Activity failed.*"activityType":"mcpCallTool"/);
  assert.match(failed, /"error":"Error code=500"/);
  assert.equal(log.includes(MCP_MARKER), false, `the log holds the MCP server's words:\n${log}`);
  assert.equal(log.includes('olaf.mcpmarker'), false);
});

test('the summary walks causes and keeps tokens only', () => {
  const provider = Object.assign(new Error(`refused: ${EMAIL}`), { status: 403, code: 'PERMISSION_DENIED', body: { message: EMAIL } });
  const wrapped = new Error('activity failed', { cause: provider });
  assert.equal(describeError(wrapped), 'Error <- Error status=403 code=PERMISSION_DENIED');
  // a code that is free text is not a code
  assert.equal(describeError(Object.assign(new Error('x'), { code: `no ${EMAIL}` })), 'Error');
  assert.equal(describeError(`${NAME} said no`), 'thrown string');
  const meta = safeLogMeta({ workflowId: 'w-1', error: provider });
  assert.deepEqual(meta, { workflowId: 'w-1', error: 'Error status=403 code=PERMISSION_DENIED' });
  assert.equal(JSON.stringify(meta).includes(EMAIL), false);
});
