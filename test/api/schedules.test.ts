// Agents on a schedule (issue 48), against the real Temporal dev server's Schedules, PostgreSQL and the offline
// model: a schedule every 10 s makes turns that run and park on an approval; a run into a conversation with an
// open item is skipped, never a decision; pause, resume and delete reach the Temporal Schedule; a disabled owner's
// schedule, or one whose owner lost the agent's role, pauses itself and says why; another user's is a 404; bad
// specs are 400s in a sentence; an erasure deletes the person's schedules; the text reaches Temporal sealed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import proto from '@temporalio/proto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { after, before, describe, test } from 'node:test';
import { temporalScheduleId } from '../../src/shared/schedules.ts';
import { ALICE, BOB, type TestApp, startTestApp } from '../support/test-app.ts';

const DORA = 'token-dora-support-schedules-0000';
const EVE = 'token-eve-support-schedules-00000';
const FAY = 'token-fay-support-schedules-00000';
const GIL = 'token-gil-support-schedules-00000';

let app: TestApp;

before(async () => {
  app = await startTestApp({
    env: { SCHEDULE_MIN_INTERVAL: '10s', SCHEDULE_MAX_PER_USER: '4' },
    tokens: {
      [DORA]: { user: 'dora-schedules', roles: ['support'] },
      [EVE]: { user: 'eve-schedules', roles: ['support'] },
      [FAY]: { user: 'fay-schedules', roles: ['support'] },
      [GIL]: { user: 'gil-schedules', roles: ['support'] },
    },
  });
});
after(async () => {
  await app?.stop();
});

/** Polls `read` until `done` holds of it (a 10 s schedule runs within 10 s; a loaded machine gets more). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T;
  do {
    last = await read();
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 500));
  } while (Date.now() < deadline);
  assert.fail(`${what}: still ${JSON.stringify(last)}`);
}

const scheduleOf = async (token: string, id: string) => {
  const list = await app.call('GET', '/v1/schedules', { token });
  assert.equal(list.status, 200, JSON.stringify(list.body));
  return list.body.schedules.find((schedule: { id: string }) => schedule.id === id);
};

const describeTemporal = (id: string) => app.client.schedule.getHandle(temporalScheduleId(id)).describe();

describe('schedules', () => {
  let parkedConversation: string;

  test('a schedule every 10 s makes a conversation per run whose turn runs and parks on an approval', async (t) => {
    const made = await app.call('POST', '/v1/schedules', { body: { agent: 'support', text: 'cancel order 13579', every: '10s' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.every, '10s');
    assert.equal(made.body.cron, null);
    assert.equal(made.body.paused, false);
    assert.ok(Date.parse(made.body.nextRunAt) > Date.now() - 1000, made.body.nextRunAt);
    const described = await describeTemporal(made.body.id);
    assert.equal(described.policies.overlap, 'SKIP');
    assert.equal(described.action.type, 'startWorkflow');

    const ran = await until(
      () => scheduleOf(ALICE, made.body.id),
      (schedule) => schedule.lastRun?.outcome === 'sent',
      'the first run',
    );
    parkedConversation = ran.lastRun.conversationId;
    const conversation = await until(
      () => app.call('GET', `/v1/conversations/${parkedConversation}`),
      (view) => view.status === 200 && view.body.pending.length === 1,
      'the run parks on its approval',
    );
    assert.equal(conversation.body.pending[0].kind, 'approval');
    // intervals are aligned to the epoch: how late after its due time the run began (a figure, not a bound)
    t.diagnostic(`the run began ${Date.parse(ran.lastRun.at) % 10_000} ms after its due time`);
    assert.equal(conversation.body.messages[0].role, 'user');
    assert.equal(conversation.body.messages[0].text, 'cancel order 13579');

    // the next run makes a conversation of its own, and the first one still waits for the person
    await until(
      () => scheduleOf(ALICE, made.body.id),
      (schedule) => schedule.lastRun?.conversationId !== parkedConversation && schedule.lastRun?.outcome === 'sent',
      'a second run into a new conversation',
    );
    const first = await app.call('GET', `/v1/conversations/${parkedConversation}`);
    assert.equal(first.body.pending.length, 1, 'the parked turn waits for the person');
    assert.equal(first.body.messages.filter((message: { role: string }) => message.role === 'user').length, 1);
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`)).status, 204);
  });

  test('a run into a conversation with an open item is skipped and recorded, and the item stays open', async () => {
    assert.ok(parkedConversation, 'the first test parked a conversation');
    const before = await app.call('GET', `/v1/conversations/${parkedConversation}`);
    const pendingId = before.body.pending[0].id;
    const made = await app.call('POST', '/v1/schedules', {
      body: { agent: 'support', text: 'no', every: '10s', conversationId: parkedConversation },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.conversationId, parkedConversation);
    const skipped = await until(
      () => scheduleOf(ALICE, made.body.id),
      (schedule) => schedule.lastRun !== null,
      'a run into the parked conversation',
    );
    assert.equal(skipped.lastRun.outcome, 'skipped', JSON.stringify(skipped.lastRun));
    assert.match(skipped.lastRun.reason, /open item/);
    assert.equal(skipped.lastRun.conversationId, parkedConversation);
    assert.equal(skipped.paused, false, 'a skip does not pause');
    const after = await app.call('GET', `/v1/conversations/${parkedConversation}`);
    assert.deepEqual(
      after.body.pending.map((item: { id: string }) => item.id),
      [pendingId],
      'the item is still open: no run decided it',
    );
    assert.equal(after.body.messages.length, before.body.messages.length, 'nothing was sent into it');
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`)).status, 204);
  });

  test('pause, resume and delete reach the Temporal Schedule', async () => {
    const made = await app.call('POST', '/v1/schedules', {
      body: { agent: 'support', text: 'look up customer 1213210', cron: '0 9 * * 1' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.cron, '0 9 * * 1');
    assert.equal(new Date(made.body.nextRunAt).getUTCDay(), 1, 'Mondays');
    const paused = await app.call('PATCH', `/v1/schedules/${made.body.id}`, { body: { paused: true } });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.paused, true);
    assert.equal(paused.body.nextRunAt, null);
    assert.equal((await describeTemporal(made.body.id)).state.paused, true);
    const resumed = await app.call('PATCH', `/v1/schedules/${made.body.id}`, { body: { paused: false, every: '1h' } });
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.equal(resumed.body.paused, false);
    assert.equal(resumed.body.every, '1h');
    assert.equal(resumed.body.cron, null);
    assert.ok(resumed.body.nextRunAt);
    const described = await describeTemporal(made.body.id);
    assert.equal(described.state.paused, false);
    assert.equal(described.spec.intervals?.[0]?.every, 3_600_000);
    // paused in Temporal itself (an operator in the Web UI): the list says so, and the owner's resume resumes it
    await app.client.schedule.getHandle(temporalScheduleId(made.body.id)).pause('operator');
    const there = await scheduleOf(ALICE, made.body.id);
    assert.equal(there.paused, true);
    assert.match(there.pausedReason, /Paused in Temporal/);
    assert.equal(there.nextRunAt, null);
    assert.equal((await app.call('PATCH', `/v1/schedules/${made.body.id}`, { body: { paused: false } })).body.paused, false);
    assert.equal((await describeTemporal(made.body.id)).state.paused, false);
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`)).status, 204);
    await assert.rejects(describeTemporal(made.body.id), ScheduleNotFoundError);
    assert.equal(await scheduleOf(ALICE, made.body.id), undefined);
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`)).status, 404);
  });

  test("a disabled owner's schedule pauses itself and says why; so does one whose owner lost the agent's role", async () => {
    const disabled = await app.call('POST', '/v1/schedules', {
      token: DORA,
      body: { agent: 'support', text: 'cancel order 13579', every: '10s' },
    });
    const demoted = await app.call('POST', '/v1/schedules', {
      token: EVE,
      body: { agent: 'support', text: 'cancel order 13579', every: '10s' },
    });
    assert.equal(disabled.status, 201, JSON.stringify(disabled.body));
    assert.equal(demoted.status, 201, JSON.stringify(demoted.body));
    await app.adminQuery("UPDATE users SET disabled_at = now() WHERE user_id = 'dora-schedules'");
    await app.adminQuery("UPDATE users SET roles = '{}' WHERE user_id = 'eve-schedules'");
    // the owner is disabled, so the list is read as an operator would see the rows
    const row = await until(
      async () => (await app.adminQuery('SELECT paused, paused_reason, last_run FROM schedules WHERE id = $1', [disabled.body.id]))[0],
      (schedule) => schedule.paused === true,
      "the disabled owner's schedule pauses",
    );
    assert.match(row.paused_reason, /owner is disabled/);
    assert.equal(row.last_run.outcome, 'paused');
    assert.equal((await describeTemporal(disabled.body.id)).state.paused, true);
    assert.equal(
      (await app.adminQuery("SELECT count(*)::int AS n FROM conversations WHERE user_id = 'dora-schedules'"))[0].n,
      0,
      'no conversation was made for a disabled owner',
    );

    const demotedView = await until(
      () => scheduleOf(EVE, demoted.body.id),
      (schedule) => schedule.paused === true,
      'the demoted owner pauses',
    );
    assert.match(demotedView.pausedReason, /"support" role/);
    assert.equal(demotedView.nextRunAt, null);
    assert.equal((await describeTemporal(demoted.body.id)).state.paused, true);
  });

  test("another user's schedule is a 404, and is not in their list", async () => {
    const made = await app.call('POST', '/v1/schedules', { body: { agent: 'support', text: 'hello', every: '1h' } });
    assert.equal(made.status, 201);
    for (const [method, body] of [
      ['PATCH', { paused: true }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await app.call(method, `/v1/schedules/${made.body.id}`, { token: BOB, body });
      assert.equal(refused.status, 404, `${method}: ${JSON.stringify(refused.body)}`);
    }
    assert.equal(await scheduleOf(BOB, made.body.id), undefined);
    assert.equal((await describeTemporal(made.body.id)).state.paused, false);
    assert.equal((await app.call('PATCH', '/v1/schedules/not-a-uuid', { body: { paused: true } })).status, 404);
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`)).status, 204);
  });

  test('bad specs are 400s in a sentence; a role the caller lacks is a 403; the per-user cap is a 409', async () => {
    const refused = async (body: unknown, pattern: RegExp, token = ALICE) => {
      const answer = await app.call('POST', '/v1/schedules', { token, body });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.match(answer.body.error, pattern);
    };
    await refused({ agent: 'support', text: 'hi', every: '5s' }, /every: must be at least 10s/);
    await refused({ agent: 'support', text: 'hi', every: 'often' }, /every: must be a duration/);
    await refused({ agent: 'support', text: 'hi', every: 1e30 }, /every: must be a whole number of milliseconds up to 366d/);
    await refused({ agent: 'support', text: 'hi', every: '1h', cron: '0 9 * * *' }, /either every or cron, not both/);
    await refused({ agent: 'support', text: 'hi' }, /give every/);
    await refused({ agent: 'support', text: 'hi', cron: 'every monday' }, /cron: is not a cron expression/);
    await refused({ agent: 'support', text: 'hi', cron: '@every 5s' }, /cron: runs 5s apart; they must be at least 10s apart/);
    await refused({ agent: 'support', text: '', every: '1h' }, /text: must not be empty/);
    await refused({ agent: 'nobody', text: 'hi', every: '1h' }, /agent/);
    await refused(
      { agent: 'support', text: 'hi', every: '1h', conversationId: '00000000-0000-4000-8000-000000000000' },
      /no such conversation/,
    );
    const other = await app.call('POST', '/v1/conversations', { body: { agent: 'recipes' } });
    await refused({ agent: 'support', text: 'hi', every: '1h', conversationId: other.body.id }, /recipes agent's, not the support agent's/);
    const kept = await app.call('POST', '/v1/schedules', { body: { agent: 'support', text: 'hi', every: '1h' } });
    for (const cron of ['nope', '@every 5s']) {
      const refusedPatch = await app.call('PATCH', `/v1/schedules/${kept.body.id}`, { body: { cron } });
      assert.equal(refusedPatch.status, 400, JSON.stringify(refusedPatch.body));
      assert.match(refusedPatch.body.error, /^cron: /);
    }
    assert.equal((await scheduleOf(ALICE, kept.body.id)).every, '1h', 'a refused change leaves the schedule as it was');
    assert.equal((await describeTemporal(kept.body.id)).spec.intervals?.[0]?.every, 3_600_000, 'and its Temporal Schedule');
    assert.equal((await app.call('DELETE', `/v1/schedules/${kept.body.id}`)).status, 204);
    const patched = await app.call('PATCH', `/v1/schedules/00000000-0000-4000-8000-000000000000`, { body: { every: '1s' } });
    assert.equal(patched.status, 400);
    assert.match(patched.body.error, /every: must be at least 10s/);
    // nothing of the refused ones is left, in PostgreSQL or Temporal
    assert.equal((await app.adminQuery("SELECT count(*)::int AS n FROM schedules WHERE user_id = 'alice'"))[0].n, 0);

    const noRole = await app.call('POST', '/v1/schedules', { token: BOB, body: { agent: 'support', text: 'hi', every: '1h' } });
    assert.equal(noRole.status, 403, JSON.stringify(noRole.body));

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const made = await app.call('POST', '/v1/schedules', { body: { agent: 'support', text: `hi ${i}`, every: '1h' } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      ids.push(made.body.id);
    }
    const over = await app.call('POST', '/v1/schedules', { body: { agent: 'support', text: 'one more', every: '1h' } });
    assert.equal(over.status, 409, JSON.stringify(over.body));
    assert.match(over.body.error, /the most one person may have/);
    for (const id of ids) assert.equal((await app.call('DELETE', `/v1/schedules/${id}`)).status, 204);
  });

  test('a run that cannot send, after its retries, records a failure in words and the schedule stays on', async () => {
    const made = await app.call('POST', '/v1/schedules', { token: GIL, body: { agent: 'support', text: 'hello', every: '10s' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    // an erasure of Gil that stopped halfway: the database refuses every new row of his (043_erasure_fence.sql)
    await app.adminQuery("INSERT INTO erased_users (user_digest, fenced_at) VALUES (brigade_user_digest('gil-schedules'), now())");
    const failed = await until(
      async () => (await app.adminQuery('SELECT paused, last_run FROM schedules WHERE id = $1', [made.body.id]))[0],
      (row) => row.last_run !== null,
      'a failed run',
      60_000,
    );
    assert.equal(failed.last_run.outcome, 'failed', JSON.stringify(failed.last_run));
    assert.match(failed.last_run.reason, /could not be sent .*the next run tries again/);
    assert.equal(failed.paused, false);
    assert.equal((await describeTemporal(made.body.id)).state.paused, false);
    await app.adminQuery("DELETE FROM erased_users WHERE user_digest = brigade_user_digest('gil-schedules')");
    assert.equal((await app.call('DELETE', `/v1/schedules/${made.body.id}`, { token: GIL })).status, 204);
  });

  test("an erasure deletes the person's schedules, rows and Temporal Schedules", async () => {
    const made = await app.call('POST', '/v1/schedules', { token: FAY, body: { agent: 'support', text: 'hello', every: '1h' } });
    assert.equal(made.status, 201);
    const exported = await app.call('GET', '/v1/me/export', { token: FAY });
    assert.equal(exported.body.schedules[0].text, 'hello');
    const erased = await app.call('DELETE', '/v1/me', { token: FAY });
    assert.equal(erased.status, 204, JSON.stringify(erased.body));
    await assert.rejects(describeTemporal(made.body.id), ScheduleNotFoundError);
    assert.equal((await app.adminQuery('SELECT count(*)::int AS n FROM schedules WHERE id = $1', [made.body.id]))[0].n, 0);
  });
});

describe('schedules with payload encryption', () => {
  const SECRET = 'zebra-crossing-4417';
  let sealed: TestApp;
  before(async () => {
    sealed = await startTestApp({
      env: { PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }), PAYLOAD_ENCRYPTION_KEY_ID: 'k1' },
    });
  });
  after(async () => {
    await sealed?.stop();
  });

  /** The history as Temporal stores it, without any codec, as bytes. */
  const rawHistory = async (workflowId: string) => {
    const { history } = await sealed.client.workflowService.getWorkflowExecutionHistory({
      namespace: sealed.config.TEMPORAL_NAMESPACE,
      execution: { workflowId },
    });
    return Buffer.from(proto.temporal.api.history.v1.History.encode(history!).finish());
  };

  test("a run's text reaches Temporal sealed: not in the Schedule, the run's history or the conversation's", async () => {
    const made = await sealed.call('POST', '/v1/schedules', { body: { agent: 'support', text: `hello ${SECRET}`, every: '10s' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const handle = sealed.client.schedule.getHandle(temporalScheduleId(made.body.id));
    const ran = await until(
      async () => (await sealed.call('GET', '/v1/schedules')).body.schedules[0],
      (schedule) => schedule.lastRun?.outcome === 'sent',
      'a run',
    );
    const conversation = await until(
      () => sealed.call('GET', `/v1/conversations/${ran.lastRun.conversationId}`),
      (view) => view.body.messages?.some((message: { text?: string }) => message.text === `hello ${SECRET}`),
      'the message in the conversation, in plain words through the API',
    );
    const described = await handle.describe();
    await handle.delete();
    assert.ok(!JSON.stringify(described.raw).includes(SECRET), 'the Temporal Schedule holds the id only');
    const runId = described.info.recentActions[0]!.action.workflow.workflowId;
    assert.ok(!(await rawHistory(runId)).includes(SECRET), "the run's history");
    assert.ok(!(await rawHistory(conversation.body.workflowId)).includes(SECRET), "the conversation's history");
  });
});
