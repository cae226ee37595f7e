// Model calls of any length (issue 43): a call is bounded by its time to the first piece and the longest gap
// between pieces, never by a clock on the whole answer. A step that outruns its workflow task moves to an
// activity on its worker's own queue, where operators see it, and the history of a turn does not grow with the
// answer's length. Short settings here (the first piece within 1.5 s, gaps of at most 1.5 s, a hand-off after
// 300 ms); test/workflows/long-answers-real-time.test.ts runs the real durations. The real @google/genai client
// streams from the scripted Gemini-wire server, on the Temporal dev server and PostgreSQL.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { temporalAddress, temporalCliPath } from '../support/harness.ts';
import type { TestApp } from '../support/test-app.ts';
import { applyEvent, draftText, emptyTranscript } from '../../web/src/transcript.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp(
  {
    key: 'long-key',
    env: { MODEL_TIMEOUT: '1500ms', MODEL_IDLE_TIMEOUT: '1500ms', MODEL_STEP_HANDOFF_AFTER: '300ms', MODEL_MAX_ATTEMPTS: '3' },
  },
  (parts) => void ({ fake, app } = parts),
);

const words = (count: number) => Array.from({ length: count }, (_, i) => `w${i} `);

async function conversation(): Promise<{ id: string; say(text: string): Promise<{ status: number; body: any }> }> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
  const id = created.body.id as string;
  return { id, say: (text) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } }) };
}

const historyLength = async (id: string) => (await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory()).events?.length ?? 0;

const deltaRows = async (id: string) =>
  (await app.adminQuery("SELECT data FROM events WHERE conversation_id = $1 AND type = 'message.delta' ORDER BY id", [id])).map(
    (row) => row.data as { attempt: number; offset: number; text: string },
  );

test('an answer that streams far longer than the first-piece clock completes once, and the history does not grow with its length', async () => {
  const { id, say } = await conversation();
  // the first exchange names the conversation (an activity of its own after the turn): out of the way first
  fake.script(reply.text('Hello.'));
  await say('Hello');
  for (let last = -1, now = await historyLength(id); now !== last; last = now, now = await historyLength(id)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // an answer of 1 s and one that streams for 10 s (more than six times MODEL_TIMEOUT), a piece every 250 ms:
  // both outrun the hand-off
  const lengths: number[] = [];
  for (const pieces of [4, 40]) {
    const before = await historyLength(id);
    const asked = fake.requests.length;
    fake.script(reply.text(words(pieces), { intervalMs: 250 }));
    const turn = await say(`Count to ${pieces}`);
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.equal(turn.body.messages.at(-1).text, words(pieces).join(''));
    assert.equal(fake.requests.length, asked + 1, 'one model request, never asked again');
    lengths.push((await historyLength(id)) - before);
  }
  const deltas = await deltaRows(id);
  assert.ok(
    deltas.every((delta) => delta.attempt === 1),
    'no attempt streamed the text again',
  );
  // A turn's history is the same whatever the answer's length (one event more or less, as the Update's timing
  // falls): no workflow-task heartbeats, which held a step in its task added three events every 3.2 s
  assert.ok(Math.abs(lengths[1]! - lengths[0]!) <= 1, `history events per turn: ${lengths.join(' then ')}`);
});

test('an operator sees a running step: a pending activity that names the conversation, since when', async () => {
  const { id, say } = await conversation();
  fake.script(reply.text(words(16), { intervalMs: 250 }));
  const turn = say('Tell me something slowly');
  const handle = app.client.workflow.getHandle(`conversation-${id}`);
  let pending: any;
  for (const deadline = Date.now() + 3000; !pending && Date.now() < deadline;) {
    pending = (await handle.describe()).raw.pendingActivities?.[0];
    if (!pending) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(pending, 'the step shows as a pending activity while it runs');
  assert.equal(pending.activityType?.name, 'followModelStep');
  assert.ok(pending.scheduledTime, 'since when');
  const history = await handle.fetchHistory();
  const scheduled = history.events?.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'followModelStep');
  const summary = Buffer.from(scheduled?.userMetadata?.summary?.data ?? new Uint8Array()).toString();
  assert.match(summary, new RegExp(`conversation ${id}, running since 20`), `the summary the Web UI shows: ${summary}`);
  // and what `temporal workflow describe` prints for it
  const { stdout } = await promisify(execFile)(temporalCliPath(), [
    'workflow',
    'describe',
    '--address',
    temporalAddress(),
    '--workflow-id',
    `conversation-${id}`,
  ]);
  assert.match(stdout, /Pending Activities: 1/);
  assert.match(stdout, /followModelStep/);
  assert.equal((await turn).status, 200);
});

test('a stream that goes quiet is cut after the idle gap, once, in one wording; so is a model that never starts', async () => {
  const { id, say } = await conversation();
  let asked = fake.requests.length;
  fake.script(reply.delay(5000, reply.text('too late')));
  // the first piece never comes
  const silent = await say('Hello?');
  assert.equal(silent.status, 200, JSON.stringify(silent.body));
  assert.equal(fake.requests.length, asked + 1, 'a timeout is not retried as a passing fault');
  assert.match(JSON.stringify(silent.body.messages), /The model did not start answering within 1500 ms/);

  // pieces, then a silence longer than MODEL_IDLE_TIMEOUT
  asked = fake.requests.length;
  fake.script(reply.text(['one ', 'two ', 'three '], { intervalMs: 2500 }));
  const quiet = await say('And again?');
  assert.equal(fake.requests.length, asked + 1);
  assert.match(JSON.stringify(quiet.body.messages), /The model stopped sending its answer: nothing came for 1500 ms/);
  const turns = (await app.call('GET', `/v1/conversations/${id}`)).body;
  assert.equal(turns.status, 'idle');
});

test('Stop reaches a handed-off step at once: the stream closes, what streamed stays, marked', async () => {
  const { id, say } = await conversation();
  fake.script(reply.text(words(40), { intervalMs: 200 }));
  const turn = say('A long one, please');
  const handle = app.client.workflow.getHandle(`conversation-${id}`);
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    if ((await handle.describe()).raw.pendingActivities?.length) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  const asked = Date.now();
  const stop = await app.call('POST', `/v1/conversations/${id}/stop`);
  assert.equal(stop.body.stopped, true);
  const cut = await turn;
  const took = Date.now() - asked;
  assert.equal(cut.body.stopped, true, JSON.stringify(cut.body));
  assert.ok(took < 1500, `the turn ended ${took} ms after Stop`);
  const last = (await app.call('GET', `/v1/conversations/${id}`)).body.messages.at(-1);
  assert.equal(last.stopped, true);
  assert.match(last.text, /^w0 w1 w2 /);
  assert.ok(!last.text.includes('w39'));
});

test('a retry after a broken stream is announced before its text: an empty delta of the new attempt at offset 0', async () => {
  const { id, say } = await conversation();
  fake.script(reply.text(words(6), { intervalMs: 50, breakAfter: 3 }), reply.text('Whole answer.'));
  const turn = await say('Try twice');
  assert.equal(turn.body.messages.at(-1).text, 'Whole answer.');
  const deltas = await deltaRows(id);
  const announced = deltas.findIndex((delta) => delta.attempt === 2);
  assert.ok(announced > 0, JSON.stringify(deltas));
  assert.deepEqual({ offset: deltas[announced]!.offset, text: deltas[announced]!.text }, { offset: 0, text: '' });
  assert.ok(deltas.slice(announced + 1).every((delta) => delta.attempt === 2));
  // the web client's reducer drops the broken attempt's draft at the announcement, and never appends across attempts
  const messageId = turn.body.messages.at(-1).id as string;
  let t = emptyTranscript();
  for (const [index, data] of deltas.entries()) {
    t = applyEvent(t, { id: index + 1, type: 'message.delta', data: { ...data, messageId } });
    if (index === announced - 1) assert.match(draftText(t.drafts[messageId]), /^w0 /);
    if (index === announced) assert.equal(draftText(t.drafts[messageId]), '');
  }
  assert.equal(draftText(t.drafts[messageId]), 'Whole answer.');
});
