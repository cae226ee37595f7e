// `npm run cluster` as a user runs it: the production topology (a Temporal server built from source on
// PostgreSQL with 4 history shards, the Web UI, two worker processes, the API process) comes up, serves the
// support scenario, lists it in the Web UI, stops cleanly on Ctrl-C, and a second start finds the first's data.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, isPortFree } from '../../stack/ports.ts';
import { workflowBundlePath } from '../support/harness.ts';

const CLUSTER_MAIN = new URL('../../bin/cluster.ts', import.meta.url).pathname;
const TOKEN = 'cluster-test-token-support-0000';

let dataDir: string;
let ports: { api: number; frontend: number; ui: number; postgres: number };
let running: { child: ChildProcess; output: () => string } | undefined;

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-cluster-test-'));
  // As root, PostgreSQL runs as the `postgres` user, who must be able to enter this directory.
  await fs.chmod(dataDir, 0o755);
  ports = { api: await freePort(), frontend: await freePort(), ui: await freePort(), postgres: await freePort() };
});

after(async () => {
  // A failed assertion must not leave the cluster behind: SIGTERM stops it in order, as Ctrl-C does.
  if (running && running.child.exitCode === null) await stop(running.child, 'SIGTERM');
  await fs.rm(dataDir, { recursive: true, force: true });
});

// A cluster left running holds this file's output pipes open and the test runner would wait for it forever:
// whatever is still running when the file's process exits is killed with it.
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startClusterProcess(): Promise<{ child: ChildProcess; output: () => string; startedMs: number }> {
  // A test that failed before its Ctrl-C leaves its cluster up; stop it first, or its ports are taken.
  if (running && running.child.exitCode === null) await stop(running.child, 'SIGTERM');
  const startedAt = Date.now();
  const child = spawn(process.execPath, [CLUSTER_MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(process.env.BRIGADE_CACHE_DIR ? { BRIGADE_CACHE_DIR: process.env.BRIGADE_CACHE_DIR } : {}),
      DATA_DIR: dataDir,
      PORT: String(ports.api),
      TEMPORAL_DEV_PORT: String(ports.frontend),
      TEMPORAL_UI_PORT: String(ports.ui),
      EMBEDDED_PG_PORT: String(ports.postgres),
      WORKERS: '2',
      WORKFLOW_BUNDLE_PATH: workflowBundlePath(),
      API_TOKENS: JSON.stringify({ [TOKEN]: { user: 'carol', roles: ['support'] } }),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let text = '';
  const output = () => text;
  running = { child, output };
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      // The summary's last line, so every line the test reads (processes, shards) has arrived.
      if (text.includes('Press Ctrl-C to stop.')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`npm run cluster exited with ${code} before it was up:\n${text}`)));
  });
  return { child, output, startedMs: Date.now() - startedAt };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

async function call(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${ports.api}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const pidsOf = (output: string) => {
  const api = Number(/API: .*\(process (\d+)\)/.exec(output)?.[1]);
  const temporal = Number(/Temporal: .*process (\d+)\)/.exec(output)?.[1]);
  const workers = (/Workers: .*\(processes ([\d, ]+)\)/.exec(output)?.[1] ?? '').split(', ').map(Number);
  return { api, temporal, workers };
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let conversationId: string;

test('npm run cluster: separate processes serve the support scenario, and the Web UI lists it', async () => {
  const { child, output, startedMs } = await startClusterProcess();
  const pids = pidsOf(output());
  assert.equal(pids.workers.length, 2, output());
  assert.equal(new Set([process.pid, child.pid, pids.api, pids.temporal, ...pids.workers]).size, 6, 'every part is its own process');
  assert.match(output(), /4 history shards/);

  const created = await call('POST', '/v1/conversations', { agent: 'support', title: 'cluster scenario' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  conversationId = created.body.id;
  const lookup = await call('POST', `/v1/conversations/${conversationId}/messages`, { text: 'status of order 24601' });
  assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
  assert.match(lookup.body.messages.at(-1).text, /24601/);
  const cancel = await call('POST', `/v1/conversations/${conversationId}/messages`, { text: 'cancel order 28164' });
  assert.equal(cancel.body.pending[0].tool, 'cancel_order');

  // The Web UI's own API, through the UI server to the cluster's frontend, as the page asks it.
  const ui = `http://127.0.0.1:${ports.ui}/api/v1/namespaces/default/workflows?query=${encodeURIComponent('BrigadeWaitingForHuman = true')}`;
  // Visibility on PostgreSQL catches up with the search attribute a moment after the approval opened.
  let listed: string[] | undefined;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(250)) {
    const page = (await (await fetch(ui)).json()) as { executions?: { execution: { workflowId: string } }[] };
    listed = page.executions?.map((e) => e.execution.workflowId);
    if (listed?.length) break;
  }
  assert.deepEqual(listed, [`conversation-${conversationId}`]);
  // the page decodes payloads through the API's codec server with its own access token, never the browser's cookies
  // (test/e2e/codec-web-ui.test.ts)
  const { Codec: codec } = (await (await fetch(`http://127.0.0.1:${ports.ui}/api/v1/settings`)).json()) as {
    Codec: Record<string, unknown>;
  };
  assert.deepEqual([codec.Endpoint, codec.PassAccessToken, codec.IncludeCredentials], [`http://127.0.0.1:${ports.api}/codec`, true, false]);

  const approved = await call('POST', `/v1/conversations/${conversationId}/decisions`, {
    pendingId: cancel.body.pending[0].id,
    decision: 'approve',
  });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  assert.match(approved.body.messages.at(-1).text, /cancelled/i);

  assert.equal(await stop(child, 'SIGINT'), 0, `Ctrl-C stops it with status 0:\n${output().slice(-2_000)}`);
  for (const pid of [pids.api, pids.temporal, ...pids.workers]) assert.equal(alive(pid), false, `process ${pid} stopped with it`);
  for (const port of Object.values(ports)) assert.equal(await isPortFree(port), true, `port ${port} is free again`);
  console.log(`# cluster up in ${(startedMs / 1000).toFixed(1)} s (cold data dir)`);
});

test('a second npm run cluster finds the data of the first', async () => {
  assert.ok(conversationId, 'the first test made a conversation');
  const { child, output, startedMs } = await startClusterProcess();
  const view = await call('GET', `/v1/conversations/${conversationId}`);
  assert.equal(view.status, 200);
  assert.equal(view.body.messages.filter((m: { role: string }) => m.role === 'user').length, 2);
  const again = await call('POST', `/v1/conversations/${conversationId}/messages`, { text: 'status of order 28164' });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.match(again.body.messages.at(-1).text, /Cancelled/);
  // the Temporal workflow is the same one, continued, not a new one
  const ui = `http://127.0.0.1:${ports.ui}/api/v1/namespaces/default/workflows?query=`;
  const listed = (await (await fetch(ui)).json()) as { executions?: unknown[] };
  assert.equal(listed.executions?.length, 1);
  assert.equal(await stop(child, 'SIGINT'), 0, output().slice(-2_000));
  await sleep(0);
  console.log(`# cluster up in ${(startedMs / 1000).toFixed(1)} s (second start)`);
});
