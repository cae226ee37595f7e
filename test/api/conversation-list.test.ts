// The conversation list (issue 46, item 7): ordered by last activity, each item saying when that was, and
// searched with ?q= over titles and the person's own messages, under row-level security, wildcards taken as text.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALICE, BOB, type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;

before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

const open = async (token: string, title: string) => {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'recipes', title } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
};

const say = async (token: string, id: string, text: string) => {
  const sent = await app.call('POST', `/v1/conversations/${id}/messages`, { token, body: { text } });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
};

interface Item {
  id: string;
  title: string;
  createdAt: string;
  match?: string;
  lastActivityAt: string;
}

const list = async (token: string, query = '') => {
  const page = await app.call('GET', `/v1/conversations${query}`, { token });
  assert.equal(page.status, 200, JSON.stringify(page.body));
  return page.body.conversations as Item[];
};

describe('the conversation list', () => {
  test('is ordered by last activity, and each item has lastActivityAt', async () => {
    const older = await open(BOB, 'started first');
    const newer = await open(BOB, 'started second');
    const before = await list(BOB);
    assert.deepEqual(
      before.map((c) => c.id),
      [newer, older],
      'with no messages yet, the newest is first',
    );
    for (const item of before) assert.equal(Date.parse(item.lastActivityAt), Date.parse(item.createdAt), 'no activity yet: its creation');
    await say(BOB, older, 'a message to the conversation started first');
    const after = await list(BOB);
    assert.deepEqual(
      after.map((c) => c.id),
      [older, newer],
      'a message moves its conversation to the top',
    );
    const moved = after[0]!;
    assert.ok(Date.parse(moved.lastActivityAt) > Date.parse(moved.createdAt), JSON.stringify(moved));
    assert.ok(Date.parse(moved.lastActivityAt) > Date.parse(after[1]!.lastActivityAt));
    // paging follows the same order
    const first = await app.call('GET', '/v1/conversations?limit=1', { token: BOB });
    assert.deepEqual(
      first.body.conversations.map((c: Item) => c.id),
      [older],
    );
    const second = await app.call('GET', `/v1/conversations?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: BOB });
    assert.deepEqual(
      second.body.conversations.map((c: Item) => c.id),
      [newer],
    );
  });

  test("?q= finds a conversation by a word of the person's message or its title, never another user's", async () => {
    const mine = await open(ALICE, 'Weeknight dinners');
    const other = await open(ALICE, 'Something else');
    await say(ALICE, mine, 'Ideas with Rhubarb and ginger, please');
    await say(ALICE, other, 'nothing to see');
    const bobs = await open(BOB, 'Bob rhubarb notes');
    await say(BOB, bobs, 'my rhubarb crumble');

    assert.deepEqual(
      (await list(ALICE, '?q=rhubarb')).map((c) => c.id),
      [mine],
      'found by a word of her message, any case',
    );
    assert.deepEqual(
      (await list(ALICE, '?q=WEEKNIGHT')).map((c) => c.id),
      [mine],
      'found by its title',
    );
    // what the list shows under the title: the words around it in her message; nothing when the title had it
    assert.equal((await list(ALICE, '?q=rhubarb'))[0]!.match, 'Ideas with Rhubarb and ginger, please');
    assert.equal((await list(ALICE, '?q=WEEKNIGHT'))[0]!.match, undefined);
    await say(
      ALICE,
      other,
      `${'A long preamble that goes on and on before it says '.repeat(3)}rhubarb, then ${'more words after it '.repeat(10)}`,
    );
    const long = (await list(ALICE, '?q=RHUBARB')).find((c) => c.id === other)!.match!;
    assert.match(long, /^…\S.* rhubarb, then more words after it .*\S…$/);
    assert.ok(long.length <= 130, `${long.length} characters`);
    assert.deepEqual(
      (await list(BOB, '?q=rhubarb')).map((c) => c.id),
      [bobs],
      "Bob's search finds his own only",
    );
    assert.deepEqual(await list(ALICE, `?q=${encodeURIComponent('%')}`), [], 'a % is text, not "anything"');
    assert.deepEqual(await list(ALICE, `?q=${encodeURIComponent('_')}`), [], 'an _ is text, not "any character"');
    assert.equal((await app.call('GET', '/v1/conversations?q=%20%20')).status, 400, 'blank');
    assert.equal((await app.call('GET', `/v1/conversations?q=${'x'.repeat(101)}`)).status, 400, 'too long');
  });
});
