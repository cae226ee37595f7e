// Edit, regenerate, branch and fork (issue 45) over the API, with the Gemini-wire test server: each gives the model
// exactly the path it should see (the server's recorded requests), GET shows the current branch with siblings, and
// the refusals are 404 (a message not in the conversation), 409 (a turn running) and 422 (the wrong kind of message).
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { type FakeGemini, type RecordedRequest, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { readSse } from '../support/sse.ts';
import { ALICE, type TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp({ checkKey: true, env: { MODEL_TIMEOUT: '10s' } }, (parts) => void ({ fake, app } = parts));
beforeEach(() => fake.reset());

type Message = {
  id: string;
  role: string;
  text: string;
  parentId: string | null;
  siblings?: { index: number; count: number; ids: string[] };
};

/** What a chat request sent the model: each content as "role: text" (tool parts by name). */
const sent = (request: RecordedRequest) =>
  (request.body.contents ?? []).map(
    (content) =>
      `${content.role}: ${(content.parts ?? []).map((part) => part.text ?? (part.functionCall ? `call ${part.functionCall.name}` : part.functionResponse ? `result ${part.functionResponse.name}` : '')).join('')}`,
  );

async function create(): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'tree' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

async function say(id: string, text: string, answer: string) {
  fake.script(reply.text(answer));
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return turn.body;
}

async function branch(id: string): Promise<Message[]> {
  const view = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(view.status, 200, JSON.stringify(view.body));
  return view.body.messages;
}

const texts = (messages: Message[]) => messages.map((m) => m.text);

describe('a conversation as a tree', () => {
  test('edit, regenerate and branch each give the model the path to the new leaf; GET shows siblings', async () => {
    const id = await create();
    await say(id, 'first', 'A1');
    await say(id, 'second', 'A2');
    const [u1, a1, u2, a2] = await branch(id);
    assert.equal(u1!.parentId, null);
    assert.equal(a2!.parentId, u2!.id);

    // edit the second question: a sibling user message, and the model sees the path up to it
    fake.script(reply.text('B2'));
    const edited = await app.call('POST', `/v1/conversations/${id}/messages/${u2!.id}/edit`, { body: { text: 'second, edited' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(texts(edited.body.messages), ['second, edited', 'B2']);
    assert.deepEqual(edited.body.pending, []);
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: first', 'model: A1', 'user: second, edited']);
    const afterEdit = await branch(id);
    assert.deepEqual(texts(afterEdit), ['first', 'A1', 'second, edited', 'B2']);
    const e2 = afterEdit[2]!;
    assert.deepEqual(e2.siblings, { index: 1, count: 2, ids: [u2!.id, e2.id] });
    assert.equal(afterEdit[3]!.siblings, undefined);

    // regenerate the answer: the turn runs again from the user message before it, the new answer its sibling
    fake.script(reply.text('C2'));
    const b2 = afterEdit[3]!;
    const regenerated = await app.call('POST', `/v1/conversations/${id}/messages/${b2.id}/regenerate`);
    assert.equal(regenerated.status, 200, JSON.stringify(regenerated.body));
    assert.deepEqual(texts(regenerated.body.messages), ['C2']);
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: first', 'model: A1', 'user: second, edited']);
    const afterRegenerate = await branch(id);
    assert.deepEqual(texts(afterRegenerate), ['first', 'A1', 'second, edited', 'C2']);
    assert.deepEqual(afterRegenerate[3]!.siblings, { index: 1, count: 2, ids: [b2.id, afterRegenerate[3]!.id] });

    // back to the first branch by its user message: its newest message becomes the leaf, and the next turn follows it
    const switched = await app.call('POST', `/v1/conversations/${id}/branch`, { body: { leafId: u2!.id } });
    assert.equal(switched.status, 200, JSON.stringify(switched.body));
    assert.deepEqual(texts(switched.body.messages), ['first', 'A1', 'second', 'A2']);
    assert.deepEqual(switched.body.messages[2].siblings, { index: 0, count: 2, ids: [u2!.id, e2.id] });
    await say(id, 'third', 'A3');
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: first', 'model: A1', 'user: second', 'model: A2', 'user: third']);

    // an edit of the first message starts a branch at the root
    fake.script(reply.text('Z1'));
    const root = await app.call('POST', `/v1/conversations/${id}/messages/${u1!.id}/edit`, { body: { text: 'first, again' } });
    assert.equal(root.status, 200, JSON.stringify(root.body));
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: first, again']);
    const rootBranch = await branch(id);
    assert.deepEqual(texts(rootBranch), ['first, again', 'Z1']);
    assert.deepEqual(rootBranch[0]!.siblings?.ids, [u1!.id, rootBranch[0]!.id]);
  });

  test('fork: a new conversation with its own workflow, whose transcript is the path up to the message', async () => {
    const id = await create();
    await say(id, 'first', 'A1');
    await say(id, 'second', 'A2');
    const [u1, a1] = await branch(id);
    const forked = await app.call('POST', `/v1/conversations/${id}/fork`, { body: { messageId: a1!.id } });
    assert.equal(forked.status, 201, JSON.stringify(forked.body));
    assert.deepEqual(Object.keys(forked.body).sort(), ['agent', 'id', 'workflowId']);
    assert.equal(forked.body.agent, 'support');
    assert.notEqual(forked.body.id, id);
    const copy = await branch(forked.body.id);
    assert.deepEqual(texts(copy), ['first', 'A1']);
    assert.ok(
      copy.every((m) => m.id !== u1!.id && m.id !== a1!.id),
      'the copy has ids of its own',
    );
    assert.equal(copy[1]!.parentId, copy[0]!.id);
    const view = await app.call('GET', `/v1/conversations/${forked.body.id}`);
    assert.equal(view.body.workflowId, forked.body.workflowId);
    assert.equal(view.body.title, 'tree (fork)');

    // the fork's workflow runs its own turns from the copy; the original goes on untouched
    await say(forked.body.id, 'other', 'O1');
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: first', 'model: A1', 'user: other']);
    assert.deepEqual(texts(await branch(id)), ['first', 'A1', 'second', 'A2']);
    const events = await app.adminQuery('SELECT data FROM events WHERE conversation_id = $1 AND type = $2', [
      forked.body.id,
      'conversation.forked',
    ]);
    assert.deepEqual(events[0]?.data, { conversationId: id, messageId: a1!.id });

    assert.equal((await app.call('POST', `/v1/conversations/${id}/fork`, { body: { messageId: 'nope' } })).status, 404);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/fork`, { body: {} })).status, 400);
  });

  test("effects are fenced: an approval in one branch is not another's, and the branch left behind is withdrawn", async () => {
    const id = await create();
    const cancel = { name: 'cancel_order', args: { order_id: '13579' } };
    fake.script(reply.calls(cancel));
    const parked = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'cancel order 13579' } });
    assert.equal(parked.body.pending[0]?.tool, 'cancel_order', JSON.stringify(parked.body));
    fake.script(reply.text('Cancelled.'));
    const approved = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      body: { pendingId: parked.body.pending[0].id, decision: 'approve' },
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const answer = approved.body.messages.at(-1);
    assert.equal(answer.text, 'Cancelled.');
    const calls = () => app.adminQuery('SELECT call_id FROM tool_calls WHERE conversation_id = $1', [id]);
    assert.equal((await calls()).length, 1);

    // regenerate the first answer (the call): the model asks again, a new call under its own approval, never run by the old one
    const [asked, firstAnswer] = await branch(id);
    fake.script(reply.calls(cancel));
    const again = await app.call('POST', `/v1/conversations/${id}/messages/${firstAnswer!.id}/regenerate`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: cancel order 13579']);
    assert.equal(again.body.pending.length, 1, 'the new call waits for its own approval');
    assert.notEqual(again.body.pending[0].callId, parked.body.pending[0].callId);
    assert.equal((await calls()).length, 1, 'the approved effect was not repeated');

    // leave that branch while it waits: its item is withdrawn in words, and no decision on it applies any more
    const left = again.body.pending[0];
    fake.script(reply.text('Nothing to cancel then.'));
    const edited = await app.call('POST', `/v1/conversations/${id}/messages/${asked!.id}/edit`, { body: { text: 'never mind' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(sent(fake.requests.at(-1)!), ['user: never mind']);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.deepEqual(view.body.pending, []);
    assert.equal(view.body.status, 'idle');
    const closed = await app.adminQuery(
      "SELECT data FROM events WHERE conversation_id = $1 AND type = 'pending.closed' AND data->>'id' = $2",
      [id, left.id],
    );
    assert.equal(closed[0]?.data.closedAs, 'withdrawn');
    // in the words of a branch move, not Stop's: going back there reads that the conversation moved on
    assert.equal(closed[0]?.data.reason, 'withdrawn: the conversation moved to another branch');
    const leftCall = await app.adminQuery("SELECT result FROM messages WHERE conversation_id = $1 AND role = 'tool' AND call_id = $2", [
      id,
      left.callId,
    ]);
    assert.deepEqual(leftCall[0]?.result, { status: 'stopped', error: 'Not run: the conversation moved to another branch.' });
    const ended = await app.adminQuery("SELECT data FROM events WHERE conversation_id = $1 AND type = 'turn.stopped'", [id]);
    assert.deepEqual(
      ended.map((row) => row.data.reason),
      ['branch'],
    );
    const late = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: left.id, decision: 'approve' } });
    assert.equal(late.status, 409, JSON.stringify(late.body));
    assert.equal((await calls()).length, 1, 'nothing ran for the withdrawn call');
    const moves = await app.adminQuery("SELECT data FROM events WHERE conversation_id = $1 AND type = 'branch.changed' ORDER BY id", [id]);
    assert.deepEqual(
      moves.map((row) => row.data.reason),
      ['regenerate', 'edit'],
    );
  });

  test('export holds the tree (JSON) and the current branch naming the others (Markdown); the stream tells of a switch', async () => {
    const id = await create();
    await say(id, 'first', 'A1');
    await say(id, 'second', 'A2');
    const [, , u2, a2] = await branch(id);
    fake.script(reply.text('B2'));
    assert.equal(
      (await app.call('POST', `/v1/conversations/${id}/messages/${u2!.id}/edit`, { body: { text: 'second, edited' } })).status,
      200,
    );
    const current = await branch(id);

    const json = await app.call('GET', `/v1/conversations/${id}/export?format=json`);
    assert.equal(json.status, 200);
    assert.deepEqual(
      json.body.messages.map((m: Message) => [
        m.text,
        m.parentId === null ? null : json.body.messages.find((p: Message) => p.id === m.parentId)?.text,
      ]),
      [
        ['first', null],
        ['A1', 'first'],
        ['second', 'A1'],
        ['A2', 'second'],
        ['second, edited', 'A1'],
        ['B2', 'second, edited'],
      ],
    );
    assert.equal(json.body.leafId, current.at(-1)!.id);

    const markdown = await app.call('GET', `/v1/conversations/${id}/export?format=markdown`);
    assert.equal(markdown.status, 200);
    const text: string = markdown.body;
    assert.ok(text.includes('second, edited') && text.includes('B2'), text);
    assert.ok(!text.includes('A2'), 'the branch left behind is named, not shown');
    assert.match(text, /1 other branch is named below the message it starts from/);
    assert.ok(text.includes(`- ${u2!.id.replace(/-/g, '\\-')}: second`), text);

    // a client following the stream learns that the current branch changed
    const stream = readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
      token: ALICE,
      until: (seen) => seen.some((e) => e.event === 'branch.changed' && e.data.data.reason === 'switch'),
    });
    const switched = await app.call('POST', `/v1/conversations/${id}/branch`, { body: { leafId: u2!.id } });
    assert.equal(switched.status, 200);
    const changed = (await stream).filter((e) => e.event === 'branch.changed').map((e) => e.data.data);
    assert.deepEqual(changed.at(-1), { leafId: a2!.id, reason: 'switch' });
  });

  test('404 for a message not in the conversation, 422 for the wrong kind, 409 while a turn runs', async () => {
    const id = await create();
    const other = await create();
    await say(id, 'hello', 'hi');
    await say(other, 'elsewhere', 'there');
    const [user, answer] = await branch(id);
    const [otherUser] = await branch(other);

    const missing = await app.call('POST', `/v1/conversations/${id}/messages/${otherUser!.id}/edit`, { body: { text: 'x' } });
    assert.equal(missing.status, 404, JSON.stringify(missing.body));
    assert.equal((await app.call('POST', `/v1/conversations/${id}/messages/nope/regenerate`)).status, 404);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/branch`, { body: { leafId: otherUser!.id } })).status, 404);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/messages/${answer!.id}/edit`, { body: { text: 'x' } })).status, 422);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/messages/${user!.id}/regenerate`)).status, 422);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/messages/${user!.id}/edit`, { body: { text: '' } })).status, 400);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/branch`, { body: {} })).status, 400);

    // a turn in flight: every move is refused until it ends
    const hold = reply.hold(reply.text('late'));
    fake.script(hold);
    const running = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'slow one' } });
    await hold.reached;
    const busy = await Promise.all([
      app.call('POST', `/v1/conversations/${id}/messages/${user!.id}/edit`, { body: { text: 'x' } }),
      app.call('POST', `/v1/conversations/${id}/messages/${answer!.id}/regenerate`),
      app.call('POST', `/v1/conversations/${id}/branch`, { body: { leafId: user!.id } }),
    ]);
    assert.deepEqual(
      busy.map((r) => r.status),
      [409, 409, 409],
    );
    hold.release();
    assert.equal((await running).status, 200);
    assert.deepEqual(texts(await branch(id)), ['hello', 'hi', 'slow one', 'late']);
  });
});
