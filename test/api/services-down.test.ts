// When Temporal or PostgreSQL is down the API says so: 503 with Retry-After, never a hang or a 500.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config.ts';
import { createPool } from '../../src/db/pool.ts';
import { freePort } from '../../stack/ports.ts';
import { freshDatabase } from '../support/harness.ts';
import { ALICE, serveApi } from '../support/test-app.ts';

let baseUrl: string;
let close: () => Promise<void>;

before(async () => {
  const database = await freshDatabase();
  const deadAddress = `127.0.0.1:${await freePort()}`;
  const config = loadConfig({ DATABASE_URL: database.url, TEMPORAL_ADDRESS: deadAddress });
  // Lazy: the connection is attempted per call, as when Temporal goes away after start-up.
  const connection = Connection.lazy({ address: deadAddress, connectTimeout: 500 });
  const client = new Client({ connection });
  const pool = createPool(database.url);
  const served = await serveApi({ config, client, pool, connection });
  const { server } = served;
  baseUrl = served.baseUrl;
  close = async () => {
    server.closeAllConnections();
    server.close();
    await pool.end();
    await database.drop();
  };
});
after(async () => close?.());

test('starting a conversation while Temporal is down is 503 with Retry-After, and leaves no row', async () => {
  const response = await fetch(`${baseUrl}/v1/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'support' }),
  });
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('retry-after'), '5');
  assert.match(((await response.json()) as { error: string }).error, /unavailable/);
  const list = await fetch(`${baseUrl}/v1/conversations`, { headers: { authorization: `Bearer ${ALICE}` } });
  assert.deepEqual(((await list.json()) as { conversations: unknown[] }).conversations, []);
});

test('readiness reports Temporal as the failing dependency', async () => {
  const response = await fetch(`${baseUrl}/readyz`);
  assert.equal(response.status, 503);
  const body = (await response.json()) as Record<string, string>;
  assert.equal(body.postgres, 'ok');
  assert.equal(body.temporal, 'failing');
  // no driver message, host or address for an anonymous caller
  assert.deepEqual(Object.keys(body).sort(), ['postgres', 'status', 'temporal']);
  assert.doesNotMatch(JSON.stringify(body), /127\.0\.0\.1|localhost|ECONN|:\d{2,5}/);
});
