// Starts `node bin/start.ts` (and the single-part entry points) as a user would, and checks what a
// user sees: a ready API, or one clear sentence naming the service, the address and the setting.
import { after, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '../../src/config.ts';
import { freePort } from '../../stack/ports.ts';
import { freshDatabase, temporalAddress, temporalCliPath, uniqueTaskQueue } from '../support/harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();
const cleanups: (() => Promise<unknown>)[] = [];

/** The environment of a developer's shell, minus any Brigade setting that could leak in. */
function baseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !(key in ConfigSchema.shape)));
}

const RUN_KEYS = JSON.stringify({ run: randomBytes(32).toString('base64') });

const api = (port: number) => `http://127.0.0.1:${port}`;

/** npm as a person runs it: the one beside this Node, else the PATH's */
function npmPath(): string {
  const beside = path.join(path.dirname(process.execPath), 'npm');
  return existsSync(beside) ? beside : 'npm';
}

/** Runs `script` with this Node, or a program (`npm`) with `options.args`. */
function run(script: string, env: Record<string, string>, options: { detached?: boolean; args?: string[] } = {}): Running {
  // The CLI the run already found: a child must not go looking (or building) on its own.
  // production settings need payload encryption keys (docs/security.md): one for the run, unless a test says otherwise
  const fullEnv = { ...baseEnv(), TEMPORAL_CLI_PATH: temporalCliPath(), PAYLOAD_ENCRYPTION_KEYS: RUN_KEYS, ...env };
  const [command, args] = options.args ? [script, options.args] : [process.execPath, [script]];
  const child = spawn(command, args, { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => output, exited };
}

async function exitOf(running: Running, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const code = await Promise.race([running.exited, sleep(timeoutMs, 'timeout' as const, { ref: false })]);
  assert.notEqual(code, 'timeout', `did not exit within ${timeoutMs} ms; output:\n${running.output()}`);
  return { code: code as number | null, output: running.output() };
}

async function tempDataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-start-'));
  await fs.chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must enter it
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: await response.json().catch(() => null) };
}

async function waitForStatus(running: Running, url: string, status: number, timeoutMs: number): Promise<{ status: number; body: any }> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null)
      assert.fail(`exited with ${running.child.exitCode} before ${url} gave ${status}:\n${running.output()}`);
    try {
      const result = await get(url);
      if (result.status === status) return result;
      last = result;
    } catch (error) {
      last = error;
    }
    await sleep(100);
  }
  assert.fail(`${url} did not give ${status} within ${timeoutMs} ms (last: ${JSON.stringify(last)}); output:\n${running.output()}`);
}

async function waitForOutput(running: Running, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(running.output())) {
    if (running.child.exitCode !== null)
      assert.fail(`exited with ${running.child.exitCode} before printing ${pattern}:\n${running.output()}`);
    if (Date.now() > deadline) assert.fail(`no ${pattern} within ${timeoutMs} ms; output:\n${running.output()}`);
    await sleep(100);
  }
}

/**
 * Starts `script` on a free PORT and waits for `pattern`. Another test of this file may take the same free port
 * between our pick and the API's listen (the "taken PORT" test binds one on purpose): then it starts again on
 * another, which is the start being tested, not the port it happened to get.
 */
async function runListening(script: string, env: Record<string, string>, pattern: RegExp, timeoutMs: number): Promise<Running> {
  for (let attempt = 1; ; attempt++) {
    const running = run(script, { ...env, PORT: String(await freePort()) });
    try {
      await waitForOutput(running, pattern, timeoutMs);
      return running;
    } catch (error) {
      if (attempt >= 3 || !/the port is in use; set PORT/.test(running.output())) throw error;
    }
  }
}

/** A whole `npm start` of its own: a new DATA_DIR, and free ports for the API, PostgreSQL, Temporal and its UI. */
async function ownStart() {
  const dataDir = await tempDataDir();
  const [port, pgPort, temporalPort, uiPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    EMBEDDED_PG_PORT: String(pgPort),
    TEMPORAL_DEV_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
  };
  return { dataDir, port, temporalPort, uiPort, env };
}

/**
 * `ownStart` and its `npm start`, waited for until /readyz is 200. The ports are free when picked, but another test
 * of this file may bind one before this start does (the "taken port" tests bind theirs on purpose): a start that
 * says a port is in use starts again on new ones, since the start being tested is not about the port it happened to get.
 */
async function startOwn(timeoutMs: number, options: { detached?: boolean } = {}) {
  for (let attempt = 1; ; attempt++) {
    const own = await ownStart();
    const running = run('bin/start.ts', own.env, options);
    try {
      const ready = await waitForStatus(running, `${api(own.port)}/readyz`, 200, timeoutMs);
      return { ...own, running, ready };
    } catch (error) {
      if (attempt >= 3 || !/is in use; set /.test(running.output())) throw error;
      await running.exited;
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Holds a port the way another program would. */
async function occupyPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as net.AddressInfo).port;
}

after(async () => {
  // A failed assertion may leave a child running: stop it gently so it stops its own children.
  await Promise.all(
    [...children].map(async (child) => {
      child.kill('SIGTERM');
      const done = await Promise.race([new Promise((resolve) => child.once('close', resolve)), sleep(20_000, 'timeout', { ref: false })]);
      if (done === 'timeout') child.kill('SIGKILL');
    }),
  );
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

describe('npm start', { concurrency: true }, () => {
  test(
    'cold start with no settings, warm restart, readiness, a stopped PostgreSQL, Ctrl-C',
    { timeout: 120_000 },
    async (t: TestContext) => {
      let started = Date.now();
      const { dataDir, port, temporalPort, uiPort, env, running: cold, ready } = await startOwn(90_000);
      const api = `http://127.0.0.1:${port}`;
      t.diagnostic(`cold start to /readyz 200: ${Date.now() - started} ms`);
      assert.deepEqual(ready.body, { status: 'ready', postgres: 'ok', temporal: 'ok' });
      assert.deepEqual(await get(`${api}/healthz`), { status: 200, body: { status: 'ok' } });

      // The banner says where things are and which token to use; the token file is private.
      await sleep(200);
      const banner = cold.output();
      assert.match(banner, new RegExp(`API: +http://127\\.0\\.0\\.1:${port}`));
      assert.match(banner, new RegExp(`Temporal Web UI: +http://127\\.0\\.0\\.1:${uiPort}`));
      const token = /Dev token: +([0-9a-f]{64})/.exec(banner)?.[1];
      assert.ok(token, `no dev token in:\n${banner}`);
      const tokenFile = path.join(dataDir, 'dev-token');
      assert.equal((await fs.readFile(tokenFile, 'utf8')).trim(), token);
      assert.equal((await fs.stat(tokenFile)).mode & 0o777, 0o600);
      assert.doesNotMatch(banner, new RegExp((await fs.readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim()));
      assert.equal((await get(`${api}/v1/conversations`, { authorization: `Bearer ${token}` })).status, 200);
      assert.equal((await get(`${api}/v1/conversations`)).status, 401);
      const ui = await fetch(`http://127.0.0.1:${uiPort}/`, { signal: AbortSignal.timeout(5_000) });
      assert.equal(ui.status, 200, 'the Temporal Web UI answers');

      // Worker Deployment Versioning: the worker is a version of the `brigade` deployment (build id: the package's
      // version and the bundle's hash), current from its start, and a conversation runs on it, auto-upgrading.
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${api}/v1/conversations`, { method: 'POST', headers: auth, body: JSON.stringify({ agent: 'support' }) });
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as { id: string };
      const said = await fetch(`${api}/v1/conversations/${id}/messages`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ text: 'hello' }),
      });
      assert.equal(said.status, 200);
      const cli = (...args: string[]) =>
        promisify(execFile)(temporalCliPath(), [...args, '--address', `127.0.0.1:${temporalPort}`, '-o', 'json']).then(({ stdout }) =>
          JSON.parse(stdout),
        );
      const deployments = JSON.stringify(await cli('worker', 'deployment', 'list'));
      assert.match(deployments, /"brigade"/, `temporal worker deployment list shows Brigade's deployment: ${deployments}`);
      const described = JSON.stringify(await cli('workflow', 'describe', '--workflow-id', `conversation-${id}`));
      assert.match(described, /"buildId":\s*"0\.1\.0-[0-9a-f]{12}"/, `the conversation's version: ${described.slice(0, 2000)}`);
      assert.match(described, /AUTO_UPGRADE|AutoUpgrade/, 'its behaviour');

      // The dev server keeps its history file in write-ahead-log mode (stack/temporal-dev-server.ts,
      // SQLITE_PRAGMAS): SQLite marks it in the file's header (read and write versions 2) and keeps a -wal file open.
      const header = Buffer.alloc(20);
      const db = await fs.open(path.join(dataDir, 'temporal.db'));
      await db.read(header, 0, 20, 0);
      await db.close();
      assert.deepEqual([header[18], header[19]], [2, 2], 'temporal.db is in WAL mode');
      await fs.access(path.join(dataDir, 'temporal.db-wal'));

      // Ctrl-C: everything stops, including the PostgreSQL and Temporal it started.
      const postgresPid = Number((await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      assert.ok(isAlive(postgresPid));
      cold.child.kill('SIGINT');
      const stopped = await exitOf(cold, 30_000);
      assert.equal(stopped.code, 0, stopped.output);
      assert.ok(!isAlive(postgresPid), 'PostgreSQL stopped with the app');
      const temporalFreed = net.connect(temporalPort, '127.0.0.1');
      await assert.rejects(new Promise((resolve, reject) => temporalFreed.once('connect', resolve).once('error', reject)), /ECONNREFUSED/);
      temporalFreed.destroy();

      // Second start: same data, same token, faster.
      started = Date.now();
      const warm = run('bin/start.ts', env);
      await waitForStatus(warm, `${api}/readyz`, 200, 60_000);
      t.diagnostic(`warm start to /readyz 200: ${Date.now() - started} ms`);
      await sleep(200);
      assert.equal(/Dev token: +([0-9a-f]{64})/.exec(warm.output())?.[1], token, 'the dev token survives a restart');
      assert.doesNotMatch(warm.output(), /Applied migrations/, 'nothing left to migrate');

      // PostgreSQL goes away under a running app: not ready (503, naming it), but alive.
      const warmPgPid = Number((await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      process.kill(warmPgPid, 'SIGINT');
      const unready = await waitForStatus(warm, `${api}/readyz`, 503, 15_000);
      assert.equal(unready.body.status, 'unavailable');
      assert.equal(unready.body.postgres, 'failing');
      assert.equal(unready.body.temporal, 'ok');
      assert.deepEqual(
        Object.keys(unready.body).sort(),
        ['postgres', 'status', 'temporal'],
        'an anonymous caller learns which dependency fails, not why',
      );
      assert.match(
        warm.output(),
        // over the Unix socket a pooled connection's write finds it closed (EPIPE), a new one no socket (connect ENOENT)
        /readyz: postgres failing: .*(ECONNREFUSED|EPIPE|ECONNRESET|terminat|connect|shutting down)/i,
        'the log says why PostgreSQL is unreachable',
      );
      assert.equal((await get(`${api}/healthz`)).status, 200);

      warm.child.kill('SIGINT');
      assert.equal((await exitOf(warm, 30_000)).code, 0);
    },
  );

  // the start's retries until PostgreSQL's deadline: 21-30 s in clean-clone runs while the suite's other starts share the cores
  test('a wrong DATABASE_URL: PostgreSQL and the address are named, the password is not', { timeout: 75_000 }, async () => {
    const port = await freePort();
    const running = run('bin/start.ts', {
      DATABASE_URL: `postgres://brigade:s3cret-pw@127.0.0.1:${port}/brigade`,
      DATA_DIR: await tempDataDir(),
    });
    const { code, output } = await exitOf(running, 60_000);
    assert.equal(code, 1);
    assert.match(
      output,
      new RegExp(
        `PostgreSQL is not reachable at postgres://brigade@127\\.0\\.0\\.1:${port}/brigade \\(DATABASE_URL\\): connection refused`,
      ),
    );
    assert.doesNotMatch(output, /s3cret-pw/);
    assert.doesNotMatch(output, /^\s+at /m, 'no stack trace');
  });

  // migrations on a fresh database, then 10 s of connection retries, while the suite's other starts share the cores
  test('a wrong TEMPORAL_ADDRESS: Temporal and the address are named', { timeout: 75_000 }, async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const port = await freePort();
    const running = run('bin/start.ts', { DATABASE_URL: db.url, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, DATA_DIR: await tempDataDir() });
    const { code, output } = await exitOf(running, 60_000);
    assert.equal(code, 1);
    assert.match(output, new RegExp(`Temporal is not reachable at 127\\.0\\.0\\.1:${port} \\(TEMPORAL_ADDRESS\\): connection refused`));
    assert.doesNotMatch(output, /^\s+at /m, 'no stack trace');
  });

  test('a taken PORT: the API names the address and the setting, and the process exits', { timeout: 60_000 }, async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const port = await occupyPort();
    const running = run('bin/start.ts', {
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: uniqueTaskQueue('startup'),
      PORT: String(port),
      DATA_DIR: await tempDataDir(),
    });
    const { code, output } = await exitOf(running, 50_000);
    assert.equal(code, 1);
    assert.match(output, new RegExp(`API could not listen on 127\\.0\\.0\\.1:${port}: the port is in use; set PORT`));
  });

  test('the dev token is printed only in the embedded dev mode', { timeout: 90_000 }, async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const services = { DATABASE_URL: db.url, TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_TASK_QUEUE: uniqueTaskQueue('startup') };

    // Configured services, no API_TOKENS: a dev token is served, and the log says where it is, not what.
    const dataDir = await tempDataDir();
    const running = await runListening('bin/start.ts', { ...services, DATA_DIR: dataDir }, /Press Ctrl-C to stop/, 60_000);
    const token = (await fs.readFile(path.join(dataDir, 'dev-token'), 'utf8')).trim();
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.ok(!running.output().includes(token), 'the token is not in the log');
    assert.match(running.output(), /Dev token: +in .*dev-token/);
    running.child.kill('SIGINT');
    assert.equal((await exitOf(running, 30_000)).code, 0);

    // npm run api without API_TOKENS: the same.
    const apiDir = await tempDataDir();
    const api = await runListening('bin/api.ts', { ...services, DATA_DIR: apiDir }, /Brigade API listening/, 30_000);
    const apiToken = (await fs.readFile(path.join(apiDir, 'dev-token'), 'utf8')).trim();
    assert.ok(!api.output().includes(apiToken), 'npm run api does not log the token');
    api.child.kill('SIGINT');
    await exitOf(api, 30_000);

    // With API_TOKENS there is no dev token at all.
    const tokensDir = await tempDataDir();
    const secret = 'a'.repeat(40);
    const withTokens = await runListening(
      'bin/start.ts',
      { ...services, DATA_DIR: tokensDir, API_TOKENS: JSON.stringify({ [secret]: { user: 'alice' } }) },
      /Press Ctrl-C to stop/,
      60_000,
    );
    assert.doesNotMatch(withTokens.output(), /dev token|dev-token/i);
    assert.ok(!withTokens.output().includes(secret));
    await assert.rejects(fs.access(path.join(tokensDir, 'dev-token')));
    withTokens.child.kill('SIGINT');
    assert.equal((await exitOf(withTokens, 30_000)).code, 0);
  });

  test('a taken embedded PostgreSQL port names EMBEDDED_PG_PORT', { timeout: 30_000 }, async () => {
    const port = await occupyPort();
    const running = run('bin/start.ts', { EMBEDDED_PG_PORT: String(port), DATA_DIR: await tempDataDir() });
    const { code, output } = await exitOf(running, 25_000);
    assert.equal(code, 1);
    assert.match(
      output,
      new RegExp(`PostgreSQL \\(embedded\\) could not start: port ${port} is in use; set EMBEDDED_PG_PORT or DATABASE_URL`),
    );
  });

  test('a taken Temporal dev server port names TEMPORAL_DEV_PORT', { timeout: 30_000 }, async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const port = await occupyPort();
    const running = run('bin/start.ts', { DATABASE_URL: db.url, TEMPORAL_DEV_PORT: String(port), DATA_DIR: await tempDataDir() });
    const { code, output } = await exitOf(running, 25_000);
    assert.equal(code, 1);
    assert.match(output, new RegExp(`Temporal dev server could not start: port ${port} is in use; set TEMPORAL_DEV_PORT`));
  });

  test('bad settings: one message naming each variable, no stack trace', { timeout: 40_000 }, async () => {
    const running = run('bin/start.ts', { PORT: 'eighty', TEMPORAL_ADDRESS: 'http://x' });
    const { code, output } = await exitOf(running, 30_000);
    assert.equal(code, 1);
    assert.match(output, /^Invalid configuration:\n {2}PORT: must be a port number\n {2}TEMPORAL_ADDRESS: must be host:port\n$/);
  });

  test('npm run worker and npm run api need both services configured', { timeout: 70_000 }, async () => {
    for (const [script, command] of [
      ['bin/worker.ts', 'npm run worker'],
      ['bin/api.ts', 'npm run api'],
    ] as const) {
      const { code, output } = await exitOf(run(script, { DATABASE_URL: 'postgres://u@127.0.0.1:1/db' }), 30_000);
      assert.equal(code, 1);
      assert.match(
        output,
        new RegExp(`${command} runs against existing services and needs DATABASE_URL and TEMPORAL_ADDRESS; not set: TEMPORAL_ADDRESS`),
      );
    }
  });

  test(
    'a kill -9 of the whole process group leaves PostgreSQL and Temporal running; the next npm start stops them and starts whole; SIGTERM to npm stops it',
    { timeout: 240_000 },
    async (t: TestContext) => {
      // as `npm start` runs in a terminal: its own process group, which `kill -9 -<pgid>` ends at once
      const { dataDir, port, env, running: first } = await startOwn(90_000, { detached: true });
      const api = `http://127.0.0.1:${port}`;
      const token = (await fs.readFile(path.join(dataDir, 'dev-token'), 'utf8')).trim();
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${api}/v1/conversations`, { method: 'POST', headers: auth, body: JSON.stringify({ agent: 'support' }) });
      const { id } = (await created.json()) as { id: string };
      const said = await fetch(`${api}/v1/conversations/${id}/messages`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ text: 'hello' }),
      });
      assert.equal(said.status, 200);

      const pidIn = async (file: string) => Number((await fs.readFile(file, 'utf8')).split('\n')[0]);
      const postgresPid = await pidIn(path.join(dataDir, 'postgres', 'postmaster.pid'));
      const temporalPid = await pidIn(path.join(dataDir, 'temporal.pid'));
      process.kill(-first.child.pid!, 'SIGKILL');
      await exitOf(first, 10_000);
      assert.ok(isAlive(postgresPid) && isAlive(temporalPid), 'the crash left both services running (their own process groups)');

      // the next start, through npm as a person types it
      const started = Date.now();
      const second = run(npmPath(), env, { args: ['start'] });
      await waitForStatus(second, `${api}/readyz`, 200, 120_000);
      t.diagnostic(`npm start after a kill -9: /readyz 200 in ${Date.now() - started} ms`);
      assert.match(second.output(), /Stopped the Temporal dev server \(pid \d+\), left running by an earlier start/);
      assert.match(second.output(), /Stopped PostgreSQL \(pid \d+\), left running by an earlier start/);
      assert.ok(!isAlive(postgresPid) && !isAlive(temporalPid), 'the leftovers are gone');
      const view = await get(`${api}/v1/conversations/${id}`, auth);
      assert.equal(view.status, 200);
      assert.ok(
        view.body.messages.some((message: { role: string; text?: string }) => message.role === 'user' && message.text === 'hello'),
        'the conversation is whole',
      );

      // a supervisor's SIGTERM to npm: npm and its shell go, and Brigade, handed to another parent, stops too
      const appPostgres = await pidIn(path.join(dataDir, 'postgres', 'postmaster.pid'));
      second.child.kill('SIGTERM');
      const deadline = Date.now() + 30_000;
      while (isAlive(appPostgres) && Date.now() < deadline) await sleep(200);
      assert.ok(!isAlive(appPostgres), 'Brigade stopped its PostgreSQL after npm was sent SIGTERM');
      await assert.rejects(get(`${api}/healthz`), 'the API is closed');
      // the owner file goes last, a moment after PostgreSQL has stopped
      const owner = path.join(dataDir, 'brigade.pid');
      const owned = () =>
        fs.access(owner).then(
          () => true,
          () => false,
        );
      while ((await owned()) && Date.now() < deadline) await sleep(200);
      assert.equal(await owned(), false, 'a clean stop leaves no owner behind');
    },
  );

  test('a second npm start on a DATA_DIR in use is refused in a sentence, and leaves the first running', { timeout: 120_000 }, async () => {
    const { port, env, running: first } = await startOwn(90_000);
    const { code, output } = await exitOf(run('bin/start.ts', { ...env, PORT: String(await freePort()) }), 30_000);
    assert.equal(code, 1);
    assert.match(output, new RegExp(`Brigade \\(pid ${first.child.pid}\\) is already running with DATA_DIR`));
    assert.equal((await get(`${api(port)}/readyz`)).status, 200, 'the first one is untouched');
    first.child.kill('SIGINT');
    assert.equal((await exitOf(first, 30_000)).code, 0);
  });

  test(
    'production settings without payload encryption keys stop every entry point, naming the setting and the way out',
    { timeout: 100_000 },
    async () => {
      const services = { DATABASE_URL: 'postgres://u@127.0.0.1:1/db', TEMPORAL_ADDRESS: '127.0.0.1:1', PAYLOAD_ENCRYPTION_KEYS: '' };
      for (const script of ['bin/worker.ts', 'bin/api.ts', 'bin/start.ts']) {
        const { code, output } = await exitOf(run(script, services), 30_000);
        assert.equal(code, 1, script);
        assert.match(output, /PAYLOAD_ENCRYPTION_KEYS: required with DATABASE_URL or TEMPORAL_ADDRESS/, script);
        assert.match(output, /PAYLOAD_ENCRYPTION=off/);
        assert.doesNotMatch(output, /not reachable/, `${script} stops before it connects to anything`);
      }
    },
  );
});
