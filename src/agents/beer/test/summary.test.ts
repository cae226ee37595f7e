// get_website_summary_tool: the PostgreSQL cache (hit, stale, miss; TTL), the grounding call through the
// real @google/genai client against fake-gemini, INVALID_URL, GROUNDING_FAILED keeping a stale entry, and
// two callers at once making one grounding call.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import pg from 'pg';
import { createPool } from '../../../db/pool.ts';
import { createOfflineTaskModel } from '../../../model/offline-tasks.ts';
import { createGeminiTaskModel } from '../../../model/task-model.ts';
import { getWebsiteSummary, normalizeUrl } from '../summary.ts';
import { type FakeGemini, reply, startFakeGemini } from '../../../../test/support/fake-gemini.ts';
import { freshDatabase } from '../../../../test/support/harness.ts';

let fake: FakeGemini;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let admin: pg.Pool;
const taskModel = () =>
  createGeminiTaskModel({ apiKey: 'k', baseUrl: fake.baseUrl, model: 'gemini-2.5-flash', imageModel: 'img', timeoutMs: 5_000 });
const charge = { userId: 'alice', key: 'summary' };
const deps = (ttlMs = 60_000) => ({ pool, taskModel: taskModel(), charge, ttlMs });
const stone = {
  brewery_name: 'Stone Brewing',
  url: 'http://www.stonebrew.com',
  brewery_type: 'regional',
  address: '1999 Citracado Pkwy, Escondido',
};
const grounded = (text = 'Stone brews bold IPAs; big gardens; tours daily.') =>
  reply.grounded(
    text,
    ['Stone Brewing Escondido', 'Stone Brewing taproom'],
    [{ uri: 'https://stonebrew.com' }, { uri: 'https://example.com/stone' }, { uri: 'https://example.org/x' }],
  );

before(async () => {
  fake = await startFakeGemini();
  database = await freshDatabase();
  pool = createPool(database.url);
  admin = createPool(database.adminUrl, { role: null });
});
after(async () => {
  await pool?.end();
  await admin?.end();
  await database?.drop();
  await fake?.close();
});
beforeEach(async () => {
  fake.reset();
  await admin.query('DELETE FROM beer_website_summaries');
});

const rows = async () => (await admin.query('SELECT * FROM beer_website_summaries')).rows;

describe('the summary cache', () => {
  test('a miss grounds and stores; the next call hits without a grounding call; the same brewery by another spelling hits too', async () => {
    fake.script(grounded());
    const first = await getWebsiteSummary(stone, deps());
    assert.equal(first.status, 'success');
    assert.equal(first.cache_status, 'CACHE_MISS');
    assert.equal(first.summary, 'Stone brews bold IPAs; big gardens; tours daily.');
    assert.deepEqual(first.grounding, { queries: ['Stone Brewing Escondido', 'Stone Brewing taproom'], source_count: 3 });
    assert.equal(fake.requests.length, 1);
    const sent = fake.requests[0]!;
    assert.equal(sent.stream, false);
    assert.deepEqual(sent.body.tools, [{ googleSearch: {} }]);
    const prompt = sent.body.contents![0]!.parts![0]!.text as string;
    assert.match(prompt, /Name: Stone Brewing/);
    assert.match(prompt, /Website: http:\/\/www\.stonebrew\.com/);

    const second = await getWebsiteSummary(stone, deps());
    assert.equal(second.cache_status, 'CACHE_HIT');
    assert.equal(second.summary, first.summary);
    const third = await getWebsiteSummary({ brewery_name: 'Stone Brewing Co', url: 'https://stonebrew.com/' }, deps());
    assert.equal(third.cache_status, 'CACHE_HIT');
    assert.equal(fake.requests.length, 1, 'hits make no grounding call');

    const [row] = await rows();
    assert.equal(row.name_key, 'stone');
    assert.equal(row.url_key, 'stonebrew.com');
    assert.deepEqual(row.grounding_queries, ['Stone Brewing Escondido', 'Stone Brewing taproom']);
    assert.equal(row.source_count, 3);
  });

  test('past the TTL an entry is stale: grounded again and replaced, never duplicated', async () => {
    fake.script(grounded('old summary'), grounded('new summary'));
    await getWebsiteSummary(stone, deps(150));
    await new Promise((resolve) => setTimeout(resolve, 250));
    const stale = await getWebsiteSummary(stone, deps(150));
    assert.equal(stale.cache_status, 'CACHE_STALE');
    assert.equal(stale.status, 'success');
    assert.equal(stale.summary, 'new summary');
    const all = await rows();
    assert.equal(all.length, 1);
    assert.equal(all[0].summary, 'new summary');
    assert.equal((await getWebsiteSummary(stone, deps(60_000))).cache_status, 'CACHE_HIT');
  });

  test('a failed grounding is GROUNDING_FAILED and keeps the stale entry', async () => {
    fake.script(grounded('kept summary'));
    await getWebsiteSummary(stone, deps(100));
    await new Promise((resolve) => setTimeout(resolve, 200));
    fake.script(reply.error(400, 'bad request'));
    const failed = await getWebsiteSummary(stone, deps(100));
    assert.equal(failed.status, 'GROUNDING_FAILED');
    assert.equal(failed.cache_status, 'CACHE_STALE');
    assert.equal(failed.summary, 'kept summary');
    assert.match(failed.error!, /Could not get a grounded summary/);
    const all = await rows();
    assert.equal(all.length, 1);
    assert.equal(all[0].summary, 'kept summary');

    fake.script(reply.error(400, 'bad request'));
    const nothing = await getWebsiteSummary({ brewery_name: 'Modern Times Beer', url: 'http://www.moderntimesbeer.com' }, deps());
    assert.equal(nothing.status, 'GROUNDING_FAILED');
    assert.equal(nothing.cache_status, 'CACHE_MISS');
    assert.equal(nothing.summary, null);
    assert.equal((await rows()).length, 1, 'a failure stores nothing');
  });

  test('INVALID_URL makes no lookup and no call', async () => {
    for (const url of ['Unavailable', 'not a url', 'ftp://stonebrew.com', 'http://localhost', 'javascript:alert(1)', 'http://10.0.0.1']) {
      const result = await getWebsiteSummary({ brewery_name: 'Stone Brewing', url }, deps());
      assert.equal(result.status, 'INVALID_URL', url);
      assert.equal(result.cache_status, null);
    }
    assert.equal(fake.requests.length, 0);
    assert.equal(normalizeUrl('stonebrew.com')?.key, 'stonebrew.com');
    assert.equal(normalizeUrl('HTTPS://WWW.StoneBrew.com/Escondido/')?.key, 'stonebrew.com/escondido');
  });

  test('two callers for the same brewery at once make one grounding call', async () => {
    const held = reply.hold(grounded('once'));
    fake.script(held);
    const a = getWebsiteSummary(stone, deps());
    await held.reached;
    const b = getWebsiteSummary({ ...stone, brewery_name: 'Stone Brewing Company' }, deps());
    await new Promise((resolve) => setTimeout(resolve, 200));
    held.release();
    const [first, second] = await Promise.all([a, b]);
    assert.equal(fake.requests.length, 1);
    assert.deepEqual([first.cache_status, second.cache_status].sort(), ['CACHE_HIT', 'CACHE_MISS']);
    assert.equal(second.summary, 'once');
    assert.equal((await rows()).length, 1);
  });

  test('the offline model says it is offline, and its summary is cached like any other', async () => {
    const offline = { pool, taskModel: createOfflineTaskModel(), charge, ttlMs: 60_000 };
    const first = await getWebsiteSummary(stone, offline);
    assert.equal(first.cache_status, 'CACHE_MISS');
    assert.match(first.summary!, /offline/i);
    assert.match(first.summary!, /Stone Brewing/);
    assert.equal((await getWebsiteSummary(stone, offline)).cache_status, 'CACHE_HIT');
  });
});
