// Conversations that exercise every path of chatSession, driven through the API. The replay test
// records their histories and replays them; `npm run record-histories` saves them for later replays.
import assert from 'node:assert/strict';
import { decisionSignal } from '../../src/shared/definitions.ts';
import type { ChatModel } from '../../src/model/types.ts';
import type { TestApp } from './test-app.ts';

/** What makes slowOnRequest stream slowly: a user message with these words. */
export const SLOW_WORDS = 'take your time';
/** What makes slowOnRequest report a costly call (3 million tokens): a user message with these words. */
export const COSTLY_WORDS = 'spend a lot';
/** The replay test's budget per conversation: far above what the other scenarios spend. */
export const REPLAY_BUDGET = 2_000_000;

/**
 * The offline model, except that a last user message with SLOW_WORDS gets a reply streamed a word every
 * 100 ms for five seconds, honouring the abort signal: a turn that is still streaming when Stop comes.
 */
export function slowOnRequest(model: ChatModel): ChatModel {
  return {
    name: model.name,
    async generate(request) {
      const last = request.messages.at(-1);
      if (last?.role === 'user' && last.text.includes(COSTLY_WORDS)) {
        const answer = await model.generate(request);
        return { ...answer, usage: { inputTokens: 2_999_000, outputTokens: 1_000, totalTokens: 3_000_000 } };
      }
      if (last?.role !== 'user' || !last.text.includes(SLOW_WORDS)) return model.generate(request);
      let text = '';
      for (let i = 1; i <= 50; i += 1) {
        if (request.signal?.aborted) throw request.signal.reason;
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (request.signal?.aborted) throw request.signal.reason;
        const piece = `word${i} `;
        text += piece;
        request.onText?.(piece);
      }
      return { text, toolCalls: [], usage: { inputTokens: 10, outputTokens: 50, totalTokens: 60 }, model: model.name };
    },
  };
}

export interface Scenario {
  name: string;
  run(app: TestApp): Promise<string>;
}

async function open(app: TestApp): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'replay' } });
  assert.equal(created.status, 201);
  return created.body.id;
}

const say = async (app: TestApp, id: string, text: string, pending?: 'decline' | 'keep') => {
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text, ...(pending ? { pending } : {}) } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return turn.body;
};

const decide = async (app: TestApp, id: string, body: Record<string, unknown>) => {
  const turn = await app.call('POST', `/v1/conversations/${id}/decisions`, { body });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return turn.body;
};

/** A decision by signal has no reply to wait on: poll the conversation until its turn ends. */
export async function waitUntilIdle(app: TestApp, id: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const view = await app.call('GET', `/v1/conversations/${id}`);
    if (view.body.status === 'idle') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`conversation ${id} did not become idle within ${timeoutMs} ms`);
}

export const scenarios: Scenario[] = [
  {
    name: 'lookup-and-chat',
    async run(app) {
      const id = await open(app);
      await say(app, id, 'look up john@gmail.com');
      await say(app, id, 'hello there');
      return id;
    },
  },
  {
    name: 'approve-reject-edit',
    async run(app) {
      const id = await open(app);
      const cancel = await say(app, id, 'cancel order 28164');
      await decide(app, id, { pendingId: cancel.pending[0].id, decision: 'approve' });
      const update = await say(app, id, 'update 3924156 phone 555-000-0000');
      await decide(app, id, { pendingId: update.pending[0].id, decision: 'edit', args: { user_id: '3924156', phone: '555-111-2222' } });
      const again = await say(app, id, 'update 3924156 email liam@example.com');
      await decide(app, id, { pendingId: again.pending[0].id, decision: 'reject', reason: 'not verified' });
      return id;
    },
  },
  {
    name: 'message-supersedes-and-signals',
    async run(app) {
      const id = await open(app);
      const cancel = await say(app, id, 'cancel order 61984');
      await say(app, id, 'actually, status of order 61984', 'decline');
      const next = await say(app, id, 'cancel order 58243');
      const handle = app.client.workflow.getHandle(`conversation-${id}`);
      await handle.signal(decisionSignal, { pendingId: 'nope', decision: 'approve' });
      await handle.signal(decisionSignal, { pendingId: next.pending[0].id, decision: 'approve' });
      await waitUntilIdle(app, id);
      assert.equal(cancel.pending.length, 1);
      return id;
    },
  },
  {
    // Stop while the model streams, Stop when idle, then a normal turn.
    name: 'stop-streaming',
    async run(app) {
      const id = await open(app);
      const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: `${SLOW_WORDS}: tell me a story` } });
      await new Promise((resolve) => setTimeout(resolve, 600));
      const stopped = await app.call('POST', `/v1/conversations/${id}/stop`);
      assert.deepEqual(stopped.body, { stopped: true });
      const answered = await turn;
      assert.equal(answered.body.stopped, true, JSON.stringify(answered.body));
      assert.equal(answered.body.messages.at(-1).stopped, true);
      assert.deepEqual((await app.call('POST', `/v1/conversations/${id}/stop`)).body, { stopped: false });
      await say(app, id, 'hello there');
      return id;
    },
  },
  {
    // A step that outruns its workflow task (5 s of streaming, handed off after 2 s) and is followed on its
    // worker's own queue to its end; then one stopped after its hand-off.
    name: 'long-answer-handed-off',
    async run(app) {
      const id = await open(app);
      const whole = await say(app, id, `${SLOW_WORDS}: tell me a long story`);
      assert.match(whole.messages.at(-1).text, /word50 $/);
      const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: `${SLOW_WORDS}: and another` } });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      assert.deepEqual((await app.call('POST', `/v1/conversations/${id}/stop`)).body, { stopped: true });
      const answered = await turn;
      assert.equal(answered.body.stopped, true, JSON.stringify(answered.body));
      return id;
    },
  },
  {
    // Stop while parked on an approval (the item is withdrawn), then by signal on a second one.
    name: 'stop-parked',
    async run(app) {
      const id = await open(app);
      const cancel = await say(app, id, 'cancel order 28164');
      assert.equal(cancel.pending.length, 1);
      assert.deepEqual((await app.call('POST', `/v1/conversations/${id}/stop`)).body, { stopped: true });
      const again = await say(app, id, 'cancel order 58243');
      assert.equal(again.pending.length, 1);
      await app.client.workflow.getHandle(`conversation-${id}`).signal('stop', 'anything');
      await waitUntilIdle(app, id);
      await say(app, id, 'look up john@gmail.com');
      return id;
    },
  },
  {
    // The conversation as a tree (issue 45): an edit that leaves a turn parked on an approval (the turn is stopped and
    // its item withdrawn), a regenerate across continue-as-new, a switch back, then a turn on that branch.
    name: 'edit-regenerate-branch',
    async run(app) {
      const id = await open(app);
      await say(app, id, 'look up john@gmail.com');
      const cancel = await say(app, id, 'cancel order 28164');
      assert.equal(cancel.pending.length, 1);
      const asked = cancel.messages[0];
      const edited = await app.call('POST', `/v1/conversations/${id}/messages/${asked.id}/edit`, {
        body: { text: 'status of order 28164' },
      });
      assert.equal(edited.status, 200, JSON.stringify(edited.body));
      const answer = edited.body.messages.at(-1);
      const again = await app.call('POST', `/v1/conversations/${id}/messages/${answer.id}/regenerate`);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      // the offline model words a regenerated answer another way (a seed per regeneration)
      assert.notEqual(again.body.messages.at(-1).text, answer.text);
      const back = await app.call('POST', `/v1/conversations/${id}/branch`, { body: { leafId: asked.id } });
      assert.equal(back.status, 200, JSON.stringify(back.body));
      await say(app, id, 'hello there');
      return id;
    },
  },
  {
    // Over the conversation's budget (REPLAY_BUDGET): approve lets the turn go on, reject ends it.
    name: 'budget-approve-reject',
    async run(app) {
      const id = await open(app);
      await say(app, id, `${COSTLY_WORDS}, please`);
      const parked = await say(app, id, 'look up john@gmail.com');
      assert.equal(parked.pending[0]?.kind, 'budget', JSON.stringify(parked));
      const approved = await decide(app, id, { pendingId: parked.pending[0].id, decision: 'approve' });
      assert.deepEqual(approved.pending, []);
      await say(app, id, `${COSTLY_WORDS} again`);
      const again = await say(app, id, 'hello there');
      assert.equal(again.pending[0]?.kind, 'budget');
      const rejected = await decide(app, id, { pendingId: again.pending[0].id, decision: 'reject', reason: 'enough' });
      assert.match(rejected.messages.at(-1).text, /budget was not raised/);
      return id;
    },
  },
];
