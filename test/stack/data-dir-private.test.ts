// Nothing under DATA_DIR is readable by other accounts (issue 29, finding 4): `node bin/start.ts` as a user
// runs it (its own Temporal dev server, whose history file holds every conversation in plain text), over a
// DATA_DIR an older version left world-readable; and the local object store's files whatever the umask.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '../../src/config.ts';
import { freePort } from '../../stack/ports.ts';
import { createLocalStore } from '../../src/storage/local-store.ts';
import { freshDatabase, temporalCliPath } from '../support/harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-private-'));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

/** every file and folder under `dir` whose mode lets another account read or write it */
async function exposed(dir: string, top = dir): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const { mode } = await fs.stat(full);
    if ((mode & 0o066) !== 0 || (entry.isFile() && (mode & 0o077) !== 0))
      found.push(`${path.relative(top, full)} ${(mode & 0o777).toString(8)}`);
    if (entry.isDirectory()) found.push(...(await exposed(full, top)));
  }
  return found;
}

test('npm start keeps DATA_DIR to its owner: the history file, the dev token, stored objects, and what an older version left readable', async () => {
  const parent = await tempDir();
  const dataDir = path.join(parent, 'data');
  // what an older version left: a world-readable folder of objects
  await fs.mkdir(path.join(dataDir, 'objects', 'recipes'), { recursive: true, mode: 0o755 });
  await fs.chmod(dataDir, 0o755);
  await fs.writeFile(path.join(dataDir, 'objects', 'recipes', 'old.png'), 'png', { mode: 0o644 });
  await fs.chmod(path.join(dataDir, 'objects', 'recipes', 'old.png'), 0o644);

  const database = await freshDatabase();
  cleanups.push(() => database.drop());
  const [port, temporalPort, uiPort] = [await freePort(), await freePort(), await freePort()];
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !(key in ConfigSchema.shape)));
  const child: ChildProcess = spawn(process.execPath, ['bin/start.ts'], {
    cwd: ROOT,
    env: {
      ...env,
      TEMPORAL_CLI_PATH: temporalCliPath(),
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      // as the test app runs (with DATABASE_URL set, a start needs payload keys once issue 35's work is in)
      PAYLOAD_ENCRYPTION: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  for (const until = Date.now() + 120_000; !output.includes('Brigade is running');) {
    assert.ok(Date.now() < until && child.exitCode === null, `npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // a conversation, so the history file has something in it
  const token = (await fs.readFile(path.join(dataDir, 'dev-token'), 'utf8')).trim();
  const created = await fetch(`http://127.0.0.1:${port}/v1/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'recipes', title: 'a secret family recipe' }),
  });
  assert.equal(created.status, 201, await created.text());

  const names = await fs.readdir(dataDir);
  assert.ok(names.includes('temporal.db'), names.join(', '));
  assert.deepEqual(await exposed(dataDir), []);
  // DATA_DIR itself: no read or write for others (execute only where PostgreSQL's user must pass through)
  assert.equal((await fs.stat(dataDir)).mode & 0o066, 0);
  child.kill('SIGTERM');
  await exited;
});

test('the local object store writes files 0600 in folders 0700 whatever the umask', async () => {
  const dir = await tempDir();
  const previous = process.umask(0o022);
  try {
    const store = createLocalStore({ root: path.join(dir, 'objects'), publicBaseUrl: 'http://127.0.0.1:1' });
    await store.put('recipes/abc/image.png', Buffer.from('png'), 'image/png');
  } finally {
    process.umask(previous);
  }
  assert.equal((await fs.stat(path.join(dir, 'objects', 'recipes', 'abc', 'image.png'))).mode & 0o777, 0o600);
  assert.equal((await fs.stat(path.join(dir, 'objects', 'recipes', 'abc'))).mode & 0o777, 0o700);
  assert.equal((await fs.stat(path.join(dir, 'objects'))).mode & 0o777, 0o700);
});
