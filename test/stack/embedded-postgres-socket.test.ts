// npm start's app reaches its embedded PostgreSQL over the server's Unix socket (a query's round trip skips
// the TCP stack on both ends; docs/performance.md), TCP staying open beside it; a data directory whose path
// cannot hold a socket falls back to TCP.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { withClient } from '../../src/db/with-client.ts';
import { startEmbeddedPostgres } from '../../stack/embedded-postgres.ts';
import { freePort } from '../../stack/ports.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function started(dataDir: string) {
  await fs.mkdir(dataDir, { recursive: true });
  cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), ephemeral: true });
  cleanups.push(() => server.stop());
  return server;
}

/** where the connection came from: null over a Unix socket, the address over TCP */
const clientAddress = (url: string) =>
  withClient(url, async (client) => (await client.query<{ addr: string | null }>('SELECT host(inet_client_addr()) AS addr')).rows[0]!.addr);

test('the local URL connects over the Unix socket, and the TCP URL still works beside it', async () => {
  const server = await started(await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-pgsock-')));
  assert.notEqual(server.localUrl, server.url);
  assert.equal(await clientAddress(server.localUrl), null);
  assert.equal(await clientAddress(server.url), '127.0.0.1');
  // the socket is its owner's alone, in a folder that is too
  const local = new URL(server.localUrl);
  const dir = local.searchParams.get('host')!;
  assert.equal((await fs.stat(dir)).mode & 0o077, 0);
  assert.equal((await fs.stat(path.join(dir, `.s.PGSQL.${local.port}`))).mode & 0o077, 0);
});

test('a data directory too deep for a socket path gets TCP as its local URL', async () => {
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-pgsock-'));
  // as root, PostgreSQL runs as its own user, which must walk through to the data directory
  await fs.chmod(parent, 0o755);
  cleanups.push(() => fs.rm(parent, { recursive: true, force: true }));
  const deep = path.join(parent, 'd'.repeat(90));
  const server = await started(deep);
  assert.equal(server.localUrl, server.url);
  assert.equal(await clientAddress(server.localUrl), '127.0.0.1');
});
