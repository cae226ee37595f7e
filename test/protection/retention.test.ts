// Retention (issue 35): the scheduled sweep erases conversations whose last event is older than
// RETENTION_CONVERSATIONS (rows, files, Temporal executions) and folds usage rows older than RETENTION_USAGE
// into anonymous totals; it counts what it did in its metrics. Time is moved by ageing rows, not by waiting.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ensureRetentionSchedule, retentionScheduleId, sweep } from '../../src/protection/retention.ts';
import { conversationFilesPrefix } from '../../src/shared/conversation-files.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { registry } from '../../src/telemetry/metrics.ts';
import { OLD_FASHIONED } from '../support/recipes.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const suffix = randomBytes(4).toString('hex');
const TOKEN = `token-kept-${suffix}-000000000000`;

let app: TestApp;
let dataDir: string;
before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-retention-'));
  app = await startTestApp({
    env: {
      DATA_DIR: dataDir,
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
      RETENTION_CONVERSATIONS: '30d',
      RETENTION_USAGE: '7d',
    },
    tokens: { [TOKEN]: { user: `kept-${suffix}`, roles: ['support'] } },
  });
});
after(async () => {
  await app?.client.schedule
    .getHandle(retentionScheduleId(app.config))
    .delete()
    .catch(() => undefined);
  await app?.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

async function lookup(): Promise<{ id: string; workflowId: string }> {
  const created = await app.call('POST', '/v1/conversations', { token: TOKEN, body: { agent: 'support' } });
  assert.equal(created.status, 201);
  assert.equal(
    (await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { token: TOKEN, body: { text: 'Look up john@gmail.com' } }))
      .status,
    200,
  );
  return created.body;
}

const metric = async (name: string) => {
  const text = await registry.metrics();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .map((line) => `${line.split(' ')[0]} ${Number(line.split(' ').at(-1))}`);
};

test('the scheduled sweep erases what is past its retention, and only that, with a metric', async () => {
  const old = await lookup();
  const recent = await lookup();
  const store = createObjectStore(app.config);
  await store.put(`${conversationFilesPrefix(old.id)}a.txt`, Buffer.from('old file'), 'text/plain');
  await store.put(`${conversationFilesPrefix(recent.id)}a.txt`, Buffer.from('recent file'), 'text/plain');
  // the old one was last active 40 days ago; the recent one's usage is 10 days old (past RETENTION_USAGE)
  await app.adminQuery(`UPDATE conversations SET created_at = now() - interval '40 days' WHERE id = $1`, [old.id]);
  await app.adminQuery(`UPDATE events SET created_at = now() - interval '40 days' WHERE conversation_id = $1`, [old.id]);
  await app.adminQuery(`UPDATE model_usage SET created_at = now() - interval '10 days' WHERE conversation_id = $1`, [recent.id]);
  const usageBefore = (
    await app.adminQuery(`SELECT count(*)::int AS n, sum(total_tokens)::int AS t FROM model_usage WHERE conversation_id = $1`, [recent.id])
  )[0];
  assert.ok(usageBefore.n > 0);

  assert.equal(await ensureRetentionSchedule(app.client, app.config), 'created');
  assert.equal(await ensureRetentionSchedule(app.client, app.config), 'updated', 'a second worker start updates it');
  const schedule = app.client.schedule.getHandle(retentionScheduleId(app.config));
  const described = await schedule.describe();
  assert.equal(described.action.type, 'startWorkflow');
  assert.equal(described.action.workflowType, 'retentionSweep');
  assert.deepEqual(
    described.spec.intervals?.map((interval) => interval.every),
    [3_600_000],
  );

  await schedule.trigger();
  let workflowId: string | undefined;
  for (let i = 0; i < 100 && !workflowId; i++) {
    workflowId = (await schedule.describe()).info.recentActions.at(-1)?.action.workflow.workflowId;
    if (!workflowId) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(workflowId, 'the schedule started a sweep');
  const report = await app.client.workflow.getHandle(workflowId).result();
  assert.equal(report.conversations, 1);
  assert.equal(report.usageRows, usageBefore.n);

  // the old conversation: no row, no file, no execution
  assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [old.id]))[0].n, 0);
  assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1', [old.id]))[0].n, 0);
  assert.equal(await store.get(`${conversationFilesPrefix(old.id)}a.txt`), undefined);
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    gone = await app.client.workflow
      .getHandle(old.workflowId)
      .describe()
      .then(
        () => false,
        (error) => error instanceof WorkflowNotFoundError,
      );
    if (!gone) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(gone, 'its execution is deleted from Temporal');

  // the recent one stays whole, but its old usage rows are anonymous totals now
  assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [recent.id]))[0].n, 1);
  assert.ok(await store.get(`${conversationFilesPrefix(recent.id)}a.txt`));
  assert.equal((await app.call('GET', `/v1/conversations/${recent.id}`, { token: TOKEN })).status, 200);
  assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM model_usage WHERE conversation_id = $1', [recent.id]))[0].n, 0);
  const totals = (await app.adminQuery('SELECT sum(total_tokens)::int AS t FROM usage_totals'))[0].t;
  assert.ok(totals >= usageBefore.t, 'the tokens are still counted, under no name');

  assert.deepEqual(await metric('brigade_retention_sweeps_total'), ['brigade_retention_sweeps_total 1']);
  assert.deepEqual((await metric('brigade_retention_erased_total')).sort(), [
    'brigade_retention_erased_total{kind="conversation"} 1',
    `brigade_retention_erased_total{kind="usage_row"} ${usageBefore.n}`,
  ]);
});

test('without a retention setting the schedule is removed', async () => {
  const none = { ...app.config, RETENTION_CONVERSATIONS: undefined, RETENTION_USAGE: undefined };
  await ensureRetentionSchedule(app.client, app.config);
  assert.equal(await ensureRetentionSchedule(app.client, none), 'removed');
  assert.equal(await ensureRetentionSchedule(app.client, none), 'none');
});

test('the sweep keeps a conversation past its retention while an approval in it is still pending', async () => {
  const created = await app.call('POST', '/v1/conversations', { token: TOKEN, body: { agent: 'recipes' } });
  assert.equal(created.status, 201);
  const asked = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, {
    token: TOKEN,
    body: { text: `save this recipe: ${OLD_FASHIONED}` },
  });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  assert.equal(asked.body.pending.length, 1, 'the save waits for an approval');
  await app.adminQuery(`UPDATE conversations SET created_at = now() - interval '40 days' WHERE id = $1`, [created.body.id]);
  await app.adminQuery(`UPDATE events SET created_at = now() - interval '40 days' WHERE conversation_id = $1`, [created.body.id]);

  const report = await sweep({ config: app.config, pool: app.pool, client: app.client });
  assert.equal(report.kept, 1, JSON.stringify(report));
  assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [created.body.id]))[0].n, 1);
  assert.equal((await app.client.workflow.getHandle(created.body.workflowId).describe()).status.name, 'RUNNING');

  // decided, nothing is open any more: the next sweep erases it
  const decided = await app.call('POST', `/v1/conversations/${created.body.id}/decisions`, {
    token: TOKEN,
    body: { pendingId: asked.body.pending[0].id, decision: 'reject' },
  });
  assert.equal(decided.status, 200, JSON.stringify(decided.body));
  await app.adminQuery(`UPDATE events SET created_at = now() - interval '40 days' WHERE conversation_id = $1`, [created.body.id]);
  const after = await sweep({ config: app.config, pool: app.pool, client: app.client });
  assert.equal(after.conversations, 1, JSON.stringify(after));
  assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [created.body.id]))[0].n, 0);
});

test('a retention not longer than the longest deadline stops the start, in a sentence', () => {
  const sentence = /RETENTION_CONVERSATIONS: is 12h, which is not longer than APPROVAL_TIMEOUT \(1d\)/;
  assert.throws(
    () => loadConfig({ RETENTION_CONVERSATIONS: '12h', APPROVAL_TIMEOUT: '24h' }),
    (error: Error) => error instanceof ConfigError && sentence.test(error.message),
  );
  assert.throws(
    () => loadConfig({ RETENTION_CONVERSATIONS: '1d', APPROVAL_TIMEOUT: '1h', BEER_CONFIRMATION_TIMEOUT: '2d' }, builtInCatalog()),
    (error: Error) => error instanceof ConfigError && /beerConfirmationTimeoutMs \(2d\)/.test(error.message),
  );
  assert.equal(loadConfig({ RETENTION_CONVERSATIONS: '2d', APPROVAL_TIMEOUT: '24h' }).RETENTION_CONVERSATIONS, 2 * 86_400_000);
});
