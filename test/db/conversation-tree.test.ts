// The conversation as a tree (db/migrations/048_conversation_tree.sql, src/db/conversation-tree.ts): a batch's
// messages hang from the current leaf, a moved leaf starts a branch, the person and the model read the path from the
// root to the leaf, and a summary applies only to the branches that run through what it folds.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { writeBatch, writeBatchReadWindow } from '../../src/db/batch.ts';
import { readBranchView, readTree, setLeaf } from '../../src/db/conversation-tree.ts';
import { insertConversation } from '../../src/db/conversations.ts';
import { asUser, createPool } from '../../src/db/pool.ts';
import { insertSummary, latestSummary, messagesToFold } from '../../src/db/summaries.ts';
import { readTranscript } from '../../src/db/transcript.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';
import { freshDatabase } from '../support/harness.ts';

let db: Awaited<ReturnType<typeof freshDatabase>>;
let app: pg.Pool;

before(async () => {
  db = await freshDatabase();
  app = createPool(db.url);
});
after(async () => {
  await app?.end();
  await db?.drop();
});

async function conversation(userId = 'alice'): Promise<{ conversationId: string; userId: string }> {
  const id = randomUUID();
  await asUser(app, userId, (client) =>
    insertConversation(client, { id, userId, agent: 'support', client: null, title: 'tree test', workflowId: `tree-${id}` }),
  );
  return { conversationId: id, userId };
}

const message = (role: 'user' | 'assistant', text: string): ChatMessage => ({ id: randomUUID(), role, text });
const texts = (messages: ChatMessage[]) => messages.map((m) => m.text);

describe('the conversation tree', () => {
  test('batches chain from the leaf; a moved leaf starts a sibling branch that the transcript and the window read', async () => {
    const ref = await conversation();
    const [u1, a1, u2, a2] = [message('user', 'u1'), message('assistant', 'a1'), message('user', 'u2'), message('assistant', 'a2')];
    await writeBatch(app, ref, { messages: [u1] });
    await writeBatch(app, ref, { messages: [a1, u2] });
    await writeBatch(app, ref, { messages: [a2] });
    // a retry of an earlier batch moves nothing
    await writeBatch(app, ref, { messages: [a1, u2] });
    const tree = await asUser(app, 'alice', (c) => readTree(c, ref.conversationId));
    assert.deepEqual(
      tree.messages.map((m) => [m.text, m.parentId]),
      [
        ['u1', null],
        ['a1', u1.id],
        ['u2', a1.id],
        ['a2', u2.id],
      ],
    );
    assert.equal(tree.leafId, a2.id);

    // an edit of u2: the leaf goes to its parent, the new user message becomes its sibling
    await asUser(app, 'alice', (c) => setLeaf(c, ref, a1.id, false));
    const [e2, b2] = [message('user', 'u2 edited'), message('assistant', 'b2')];
    await writeBatch(app, ref, { messages: [e2] });
    await writeBatch(app, ref, { messages: [b2] });
    assert.deepEqual(texts(await asUser(app, 'alice', (c) => readTranscript(c, ref.conversationId))), ['u1', 'a1', 'u2 edited', 'b2']);
    const window = await writeBatchReadWindow(app, ref, {}, 100);
    assert.deepEqual(texts(window.messages), ['u1', 'a1', 'u2 edited', 'b2']);
    const view = await asUser(app, 'alice', (c) => readBranchView(c, ref.conversationId));
    assert.deepEqual(view[2]!.siblings, { index: 1, count: 2, ids: [u2.id, e2.id] });
    assert.equal(view[0]!.siblings, undefined);

    // a switch by a sibling's id goes to the newest leaf under it
    assert.equal(await asUser(app, 'alice', (c) => setLeaf(c, ref, u2.id, true)), a2.id);
    assert.deepEqual(texts((await writeBatchReadWindow(app, ref, {}, 100)).messages), ['u1', 'a1', 'u2', 'a2']);
    // an edit of the first message hangs from the root
    await asUser(app, 'alice', (c) => setLeaf(c, ref, null, false));
    await writeBatch(app, ref, { messages: [message('user', 'u1 edited')] });
    assert.deepEqual(texts((await writeBatchReadWindow(app, ref, {}, 100)).messages), ['u1 edited']);
  });

  test('a message not in the conversation is refused; another user cannot move the leaf', async () => {
    const ref = await conversation();
    await writeBatch(app, ref, { messages: [message('user', 'hello')] });
    await assert.rejects(
      asUser(app, 'alice', (c) => setLeaf(c, ref, randomUUID(), false)),
      (error: { code?: string }) => error.code === 'P0002',
    );
    await assert.rejects(
      asUser(app, 'mallory', (c) => setLeaf(c, { ...ref, userId: 'mallory' }, null, false)),
      (error: { code?: string }) => error.code === '42501',
    );
  });

  test('a summary applies only to a branch that runs through what it folds', async () => {
    const ref = await conversation();
    const [u1, a1, u2, a2] = [message('user', 'u1'), message('assistant', 'a1'), message('user', 'u2'), message('assistant', 'a2')];
    await writeBatch(app, ref, { messages: [u1, a1, u2, a2] });
    const throughSeq = (await asUser(app, 'alice', (c) => messagesToFold(c, ref.conversationId, a1.id))).fold!.throughSeq;
    await asUser(app, 'alice', (c) => insertSummary(c, ref, { throughMessageId: a1.id, throughSeq, text: 'S', tokens: 1, model: 'm' }));
    const onIt = await writeBatchReadWindow(app, ref, {}, 100);
    assert.equal(onIt.summary?.throughMessageId, a1.id);
    assert.deepEqual(texts(onIt.messages), ['u2', 'a2']);
    assert.equal((await asUser(app, 'alice', (c) => latestSummary(c, ref.conversationId)))?.throughMessageId, a1.id);

    // an edit of u1 leaves the summarised prefix: its branch reads no summary
    await asUser(app, 'alice', (c) => setLeaf(c, ref, null, false));
    await writeBatch(app, ref, { messages: [message('user', 'v1'), message('assistant', 'b1')] });
    const off = await writeBatchReadWindow(app, ref, {}, 100);
    assert.equal(off.summary, undefined);
    assert.deepEqual(texts(off.messages), ['v1', 'b1']);
    assert.equal(await asUser(app, 'alice', (c) => latestSummary(c, ref.conversationId)), undefined);

    // what a later fold covers is the fold point's path after the summary in force there
    const fold = await asUser(app, 'alice', (c) => messagesToFold(c, ref.conversationId, a2.id));
    assert.equal(fold.previous?.throughMessageId, a1.id);
    assert.deepEqual(texts(fold.fold!.messages), ['u2', 'a2']);
    assert.deepEqual(await asUser(app, 'alice', (c) => messagesToFold(c, ref.conversationId, a1.id)).then((f) => f.fold), undefined);
  });

  test('the window read at 1,000 messages (timing, printed): one branch as before, a branched one by its path', async () => {
    const ref = await conversation();
    const writes: number[] = [];
    for (let i = 0; i < 500; i++) {
      const started = performance.now();
      await writeBatch(app, ref, { messages: [message('user', `q${i}`), message('assistant', `a${i}`)] });
      writes.push(performance.now() - started);
    }
    writes.sort((x, y) => x - y);
    console.log(`batch write of 2 messages: p50 ${writes[250]!.toFixed(2)} ms, p90 ${writes[450]!.toFixed(2)} ms`);
    const time = async (what: string, limit: number) => {
      const times: number[] = [];
      for (let i = 0; i < 60; i++) {
        const started = performance.now();
        const read = await writeBatchReadWindow(app, ref, {}, limit);
        times.push(performance.now() - started);
        assert.equal(read.messages.length, Math.min(limit, 1000));
        assert.equal(read.messages.at(-1)!.text, 'a499');
        assert.equal(read.messages[0]!.text, limit >= 1000 ? 'q0' : `q${500 - limit / 2}`);
      }
      times.sort((a, b) => a - b);
      console.log(`window read, 1000 messages, ${what}, limit ${limit}: p50 ${times[30]!.toFixed(2)} ms, p90 ${times[54]!.toFixed(2)} ms`);
    };
    for (const limit of [100, 1650]) await time('one branch', limit);
    // a branch switch away and back: the same path, now read by walking up the tree
    const leaf = (await writeBatchReadWindow(app, ref, {}, 2)).messages.at(-1)!.id;
    const [first] = (await writeBatchReadWindow(app, ref, {}, 1000)).messages;
    await asUser(app, 'alice', (c) => setLeaf(c, ref, first!.id, false));
    assert.equal(await asUser(app, 'alice', (c) => setLeaf(c, ref, first!.id, true)), leaf);
    for (const limit of [100, 1650]) await time('branched', limit);
  });
});
