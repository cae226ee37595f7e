// The one test of the real duration: with BEER_CONFIRMATION_TIMEOUT unset, "would you like details?"
// waits 30 s: not less, and the recommendation ends by about 31 s, with no grounding call.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { SAN_DIEGO_CLIENT, groundingCalls, scriptBeerGemini, untilIdle } from '../../../../test/support/beer.ts';
import { type FakeGemini, startFakeGemini } from '../../../../test/support/fake-gemini.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../../../../test/support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let fake: FakeGemini;
let api: FakeOpenBreweryDb;
let app: TestApp;
/** Beer staff may open a conversation for a named client. */
const call: TestApp['call'] = (method, path, options = {}) => app.call(method, path, { token: ERIN_BEER_STAFF, ...options });

before(async () => {
  fake = await startFakeGemini();
  api = await startFakeOpenBreweryDb();
  app = await startTestApp({ env: { GEMINI_API_KEY: 'k', GEMINI_BASE_URL: fake.baseUrl, OPENBREWERYDB_BASE_URL: api.baseUrl } });
  scriptBeerGemini(fake);
});
after(async () => {
  await app?.stop();
  await api?.close();
  await fake?.close();
});

test('the confirmation waits the real 30 s, then ends as no answer', async () => {
  assert.equal(app.config.BEER_CONFIRMATION_TIMEOUT, 30_000);
  const created = await call('POST', '/v1/conversations', { body: { agent: 'beer', client: SAN_DIEGO_CLIENT } });
  const id = created.body.id;
  const turn = await call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'recommend breweries' } });
  const item = turn.body.pending[0];
  const openedAt = Date.parse(item.expiresAt) - 30_000;
  assert.ok(Math.abs(openedAt - Date.now()) < 5_000);

  await new Promise((resolve) => setTimeout(resolve, Math.max(0, openedAt + 29_000 - Date.now())));
  const before30 = await call('GET', `/v1/conversations/${id}`);
  assert.equal(before30.body.status, 'waiting', 'still waiting at 29 s');
  assert.equal(before30.body.pending[0]?.id, item.id);

  const view = await untilIdle(call, id, 15_000);
  const tool = view.messages.find((m: any) => m.tool === 'recommend_breweries');
  assert.equal(tool.result.answer, 'timeout');
  assert.equal(groundingCalls(fake), 0);

  // When the item closed, from the event log: not before 30 s, and by about 31 s.
  const db = new pg.Client({ connectionString: app.adminUrl });
  await db.connect();
  const { rows } = await db.query(
    `SELECT (extract(epoch FROM created_at) * 1000)::float8 AS at, data FROM events WHERE conversation_id = $1 AND type = 'pending.closed'`,
    [id],
  );
  const { rows: ended } = await db.query(
    `SELECT (extract(epoch FROM max(created_at)) * 1000)::float8 AS at FROM events WHERE conversation_id = $1 AND type = 'progress'`,
    [id],
  );
  await db.end();
  assert.equal(rows[0].data.timedOut, true);
  const closedAfter = rows[0].at - openedAt;
  const endedAfter = ended[0].at - openedAt;
  assert.ok(closedAfter >= 30_000, `closed ${closedAfter} ms after opening`);
  assert.ok(endedAfter <= 31_500, `the recommendation ended ${endedAfter} ms after opening`);
});
