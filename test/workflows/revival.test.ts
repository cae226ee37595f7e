// Revival (issue 28, item 3): a conversation whose workflow was terminated is brought back from PostgreSQL
// on its next message or decision, as a new run under the same workflow id, with its transcript whole and
// what was left open closed in words; `npm run revive` does the same for an operator. Real parts: the
// Temporal dev server, PostgreSQL, and the Gemini-wire test server behind the real @google/genai client.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { lockConversationRuns } from '../../src/api/revival.ts';
import { sessionSettings } from '../../src/api/session-settings.ts';
import { temporalAddress } from '../support/harness.ts';
import { type TestApp } from '../support/test-app.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
let fake: FakeGemini;
let app: TestApp;

geminiApp({ key: 'revival-key', env: { MODEL_TIMEOUT: '10s' } }, (parts) => void ({ fake, app } = parts));
// a test that failed leaves its unused replies behind; the next one starts from none
beforeEach(() => fake.reset());

const open = async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'revival' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { id: created.body.id as string, workflowId: created.body.workflowId as string };
};
/** a turn, or a failure after 90 s: a wedged run never answers the Update */
const say = async (id: string, text: string) => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to "${text}" within 90 s`)), 90_000);
  });
  try {
    const turn = await Promise.race([app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } }), late]);
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    return turn.body;
  } finally {
    clearTimeout(timer);
  }
};
const view = async (id: string) => {
  const got = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(got.status, 200, JSON.stringify(got.body));
  return got.body;
};
const describeRun = (workflowId: string) => app.client.workflow.getHandle(workflowId).describe();
/** ends the run by hand, as an operator (or a crash that leaves no run) would */
const endRun = (workflowId: string) => app.client.workflow.getHandle(workflowId).terminate('a test ends it by hand');
/** a conversation with one answered turn, whose run has then ended */
const endedAfterATurn = async () => {
  const opened = await open();
  fake.script(reply.text('Hello.'));
  await say(opened.id, 'Hello');
  await endRun(opened.workflowId);
  return opened;
};
/** every text the model was sent in its last request */
const lastRequestText = () => JSON.stringify(fake.requests.at(-1)!.body.contents);

describe('revival', () => {
  test("a terminated conversation's next message revives it as a new run, with its transcript whole, and is answered", async () => {
    const { id, workflowId } = await open();
    fake.script(reply.text('Hello! How can I help?'));
    await say(id, 'Hi there, my name is Ada');
    fake.script(reply.calls({ name: 'get_order_by_id', args: { order_id: '12345' } }), reply.text('Order 12345 is on its way.'));
    await say(id, 'Where is order 12345?');
    const before = await view(id);
    assert.equal(before.messages.length, 6);
    const dead = await describeRun(workflowId);

    await endRun(workflowId);
    assert.equal((await describeRun(workflowId)).status.name, 'TERMINATED');

    fake.script(reply.text('Yes, Ada, I am still here.'));
    const turn = await say(id, 'Are you still there?');
    assert.equal(turn.messages.at(-1).text, 'Yes, Ada, I am still here.');
    assert.deepEqual(turn.pending, []);

    const revived = await describeRun(workflowId);
    assert.equal(revived.status.name, 'RUNNING');
    assert.notEqual(revived.runId, dead.runId, 'a new run under the same workflow id');

    const after = await view(id);
    assert.deepEqual(after.messages.slice(0, before.messages.length), before.messages, 'the transcript before is whole');
    const note = after.messages[before.messages.length];
    assert.equal(note.role, 'assistant');
    assert.match(note.text, /interrupted: its workflow ended \(terminated\).*restored from its saved transcript/);
    assert.deepEqual(
      after.messages.slice(-2).map((message: { text: string }) => message.text),
      ['Are you still there?', 'Yes, Ada, I am still here.'],
    );
    assert.equal(after.status, 'idle');
    assert.ok(after.usage.calls >= before.usage.calls + 1, 'the usage PostgreSQL knows is kept and grows');
    // the model was given the whole transcript, the earlier turns included
    const sent = lastRequestText();
    for (const words of ['my name is Ada', 'Order 12345 is on its way.', 'Are you still there?'])
      assert.ok(sent.includes(words), `the model saw "${words}"`);

    // and it goes on as any conversation does
    fake.script(reply.text('Goodbye.'));
    assert.equal((await say(id, 'Thanks, bye')).messages.at(-1).text, 'Goodbye.');
  });

  test('a decision on a terminated conversation revives it: the approval that waited is closed in words, the model is told, and the next message is answered', async () => {
    const { id, workflowId } = await open();
    fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '12345' } }));
    const parked = await say(id, 'Cancel order 12345');
    const [item] = parked.pending;
    assert.equal(item.kind, 'approval');
    const before = await view(id);

    await endRun(workflowId);

    const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, decision: 'approve' } });
    assert.equal(decided.status, 409, JSON.stringify(decided.body));
    assert.match(decided.body.error, /not pending any more \(withdrawn\)/);
    assert.equal((await describeRun(workflowId)).status.name, 'RUNNING', 'the decision revived the conversation');

    const after = await view(id);
    assert.deepEqual(after.pending, []);
    assert.deepEqual(after.messages.slice(0, before.messages.length), before.messages, 'the transcript before is whole');
    const closed = after.messages.find(
      (message: { role: string; callId?: string }) => message.role === 'tool' && message.callId === item.callId,
    );
    assert.match(closed.result.error, /Not run: this call waited for a person's approval/);
    assert.match(after.messages.at(-1).text, /One item that waited for a decision was closed without one/);
    const events = await app.adminQuery(`SELECT data FROM events WHERE conversation_id = $1 AND type = 'pending.closed'`, [id]);
    assert.deepEqual(
      events.map((row) => [row.data.id, row.data.closedAs]),
      [[item.id, 'withdrawn']],
    );

    fake.script(reply.text('The cancellation was not made; shall I ask again?'));
    const next = await say(id, 'Did the cancellation go through?');
    assert.equal(next.messages.at(-1).text, 'The cancellation was not made; shall I ask again?');
    assert.match(lastRequestText(), /Not run: this call waited for a person's approval/, 'the model knows what became of the call');
  });

  test('npm run revive brings a terminated conversation back; a healthy one only with --force', async () => {
    const { id, workflowId } = await open();
    fake.script(reply.text('Noted.'));
    await say(id, 'Remember the number 42');
    const revive = (...args: string[]) =>
      promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/revive.ts'), ...args], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: app.databaseUrl,
          TEMPORAL_ADDRESS: temporalAddress(),
          TEMPORAL_TASK_QUEUE: app.taskQueue,
          // as the test app's API and worker run: the CLI reads and writes payloads the way they do
          PAYLOAD_ENCRYPTION: 'off',
          LOG_LEVEL: 'info',
        },
      });

    const healthy = await revive(id);
    assert.match(healthy.stdout + healthy.stderr, /healthy.*nothing done/);
    const first = await describeRun(workflowId);

    await endRun(workflowId);
    const done = await revive(id);
    assert.match(done.stdout + done.stderr, /revived as a new run/);
    const second = await describeRun(workflowId);
    assert.equal(second.status.name, 'RUNNING');
    assert.notEqual(second.runId, first.runId);

    const forced = await revive(id, '--force');
    assert.match(forced.stdout + forced.stderr, /revived as a new run of .* \(the run before: running;/);
    assert.notEqual((await describeRun(workflowId)).runId, second.runId);

    fake.script(reply.text('It was 42.'));
    assert.equal((await say(id, 'What was the number?')).messages.at(-1).text, 'It was 42.');
    assert.match(lastRequestText(), /Remember the number 42/);
  });
});

describe('a conversation whose run timed out', () => {
  test('is revived by its next message', async () => {
    const { id, workflowId } = await open();
    fake.script(reply.text('One.'));
    await say(id, 'One');
    // A run with a run timeout, as a deployment might set one: it times out while the conversation is idle.
    await app.client.workflow.getHandle(workflowId).terminate('replaced by a run that times out');
    const input = {
      conversationId: id,
      userId: 'alice',
      agent: 'support',
      title: 'revival',
      settings: sessionSettings(app.config, app.catalog),
    };
    await app.client.workflow.start('chatSession', { workflowId, taskQueue: app.taskQueue, args: [input], workflowRunTimeout: '1s' });
    const deadline = Date.now() + 20_000;
    while ((await describeRun(workflowId)).status.name !== 'TIMED_OUT') {
      assert.ok(Date.now() < deadline, 'the run timed out');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    fake.script(reply.text('Two.'));
    assert.equal((await say(id, 'Two')).messages.at(-1).text, 'Two.');
    const after = await view(id);
    assert.ok(after.messages.some((message: { text: string }) => /its workflow ended \(timed out\)/.test(message.text)));
    assert.equal((await describeRun(workflowId)).status.name, 'RUNNING');
  });
});

describe('two requests at once', () => {
  test('to a terminated conversation revive it once: one note, one new run, each answered', async () => {
    const { id, workflowId } = await endedAfterATurn();
    fake.scriptFn(() => reply.text('Answered.'));
    const answers = await Promise.all(
      ['First at once', 'Second at once'].map((text) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } })),
    );
    for (const answer of answers) assert.ok([200, 409].includes(answer.status), JSON.stringify(answer.body));
    assert.ok(answers.some((answer) => answer.status === 200));
    const after = await view(id);
    const notes = after.messages.filter((message: { text: string }) => /This conversation was interrupted/.test(message.text));
    assert.equal(notes.length, 1, 'one revival, one note');
    const runs = [];
    for await (const run of app.client.workflow.list({ query: `WorkflowId = "${workflowId}" AND ExecutionStatus = "Running"` }))
      runs.push(run.runId);
    assert.ok(runs.length <= 1, `one running run: ${runs.join(', ')}`);
  });
});

describe('a revival behind a DELETE', () => {
  test('finds the conversation gone once the DELETE that held it commits: 410, and no run is started for it', async () => {
    const { id, workflowId } = await endedAfterATurn();
    // what DELETE does, under the lock a revival takes: the message's revival waits for it
    const db = await app.pool.connect();
    try {
      await db.query('BEGIN');
      await db.query("SELECT set_config('brigade.user_id', 'alice', true)");
      await lockConversationRuns(db, id);
      const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Still there?' } });
      for (const deadline = Date.now() + 30_000; ;) {
        const [{ waiting }] = await app.adminQuery(
          "SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        if (waiting > 0) break;
        assert.ok(Date.now() < deadline, 'the revival reached the lock');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await db.query('SELECT brigade_delete_conversation($1, $2)', ['alice', id]);
      await db.query('COMMIT');
      const answered = await turn;
      assert.equal(answered.status, 410, JSON.stringify(answered.body));
      assert.equal(answered.body.error, 'The conversation was deleted while this turn ran');
    } finally {
      db.release();
    }
    assert.equal((await describeRun(workflowId)).status.name, 'TERMINATED', 'the dead run is the last: none was started');
  });
});

describe('a wedged conversation', () => {
  test('whose workflow task fails again and again is terminated and revived by its next message', async () => {
    const { id, workflowId } = await open();
    fake.script(reply.text('First answer.'));
    await say(id, 'First question');
    // Wedge it: the same workflow id runs a workflow type no worker has, so every workflow task fails, as
    // one that runs into a catastrophic pattern or a non-deterministic change does.
    await app.client.workflow.getHandle(workflowId).terminate('replaced by a wedged run');
    await app.client.workflow.start('noSuchWorkflowType', { workflowId, taskQueue: app.taskQueue, args: [] });
    const wedged = await describeRun(workflowId);

    fake.script(reply.text('Second answer.'));
    const turn = await say(id, 'Second question');
    assert.equal(turn.messages.at(-1).text, 'Second answer.');
    const history = await app.client.workflow.getHandle(workflowId, wedged.runId).describe();
    assert.equal(history.status.name, 'TERMINATED', 'the wedged run was terminated');
    assert.notEqual((await describeRun(workflowId)).runId, wedged.runId);
    const after = await view(id);
    assert.deepEqual(after.messages.map((message: { text: string }) => message.text).slice(0, 2), ['First question', 'First answer.']);
    assert.match(after.messages[2].text, /interrupted: its workflow was stuck/);
    assert.match(lastRequestText(), /First question/);
  });
});

describe('a stateful agent', () => {
  test('keeps the state its dead run last held (a step marked done) when its next message revives it', async () => {
    const recipe = {
      title: 'Pancakes',
      servings: 2,
      ingredients: [
        { id: 'i1', text: '200 g flour' },
        { id: 'i2', text: '300 ml milk' },
      ],
      steps: [
        { id: 's1', text: 'Whisk the flour and milk into a batter.' },
        { id: 's2', text: 'Fry ladlefuls of batter in a hot pan.' },
      ],
    };
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', recipe, defaults: { portions: 2 } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { id, workflowId } = created.body;
    const marked = await app.call('POST', `/v1/conversations/${id}/steps/s1/done`);
    assert.equal(marked.status, 200, JSON.stringify(marked.body));
    assert.equal(marked.body.recipe.steps[0].status, 'done');

    await endRun(workflowId);
    fake.script(reply.text(JSON.stringify({ assistant_message: 'Now fry the batter.', patchSet: null })));
    const turn = await say(id, 'What next?');
    assert.equal(turn.messages.at(-1).text, 'Now fry the batter.');
    const after = await view(id);
    assert.equal(after.recipe.version, marked.body.recipe.version, 'the recipe as the dead run held it');
    assert.equal(after.recipe.steps[0].status, 'done', 'the step marked done in the dead run is still done');
  });
});
