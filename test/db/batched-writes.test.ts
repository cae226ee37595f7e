// The batched writes a step makes (src/db/batch.ts, src/db/tool-calls.ts, db/migrations/010_batch_writes.sql):
// one statement per batch, keyed and idempotent under retry, events in order, row-level security as the
// user the batch names, and no way to write into another user's conversation.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { createRunTool } from '../../src/activities/run-tool.ts';
import { loadConfig } from '../../src/config.ts';
import { writeBatch, writeBatchReadTranscript } from '../../src/db/batch.ts';
import { insertConversation } from '../../src/db/conversations.ts';
import { asUser, createPool } from '../../src/db/pool.ts';
import { recordToolCall, withToolCall } from '../../src/db/tool-calls.ts';
import { insertEvents, insertMessages, readTranscript } from '../../src/db/transcript.ts';
import { selectTaskModel } from '../../src/model/select.ts';
import type { ChatMessage, NewEvent } from '../../src/shared/messages.ts';
import { freshDatabase } from '../support/harness.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';

let db: Awaited<ReturnType<typeof freshDatabase>>;
let app: pg.Pool;
let admin: pg.Pool;

before(async () => {
  db = await freshDatabase();
  app = createPool(db.url);
  admin = createPool(db.adminUrl, { role: null });
});
after(async () => {
  await app?.end();
  await admin?.end();
  await db?.drop();
});

async function conversation(userId: string): Promise<{ conversationId: string; userId: string }> {
  const id = randomUUID();
  await asUser(app, userId, (client) =>
    insertConversation(client, { id, userId, agent: 'support', client: null, title: 'batch test', workflowId: `batch-${id}` }),
  );
  return { conversationId: id, userId };
}

/** What is stored, read past row-level security. */
async function stored(conversationId: string) {
  const events = await admin.query<{ key: string; type: string; data: any; user_id: string }>(
    'SELECT key, type, data, user_id FROM events WHERE conversation_id = $1 ORDER BY id',
    [conversationId],
  );
  const messages = await admin.query<{ id: string; user_id: string; text: string }>(
    'SELECT id, user_id, text FROM messages WHERE conversation_id = $1 ORDER BY seq',
    [conversationId],
  );
  const usage = await admin.query('SELECT * FROM model_usage WHERE conversation_id = $1', [conversationId]);
  const calls = await admin.query('SELECT call_id, tool, args, result FROM tool_calls WHERE conversation_id = $1', [conversationId]);
  return { events: events.rows, messages: messages.rows, usage: usage.rows, calls: calls.rows };
}

const userMessage = (text: string): ChatMessage => ({ id: randomUUID(), role: 'user', text });

describe('a batch', () => {
  test('writes messages in order, each with its events, then the other events in the order given', async () => {
    const ref = await conversation('alice');
    const user = userMessage('status of order 24601');
    const step = randomUUID();
    const assistant: ChatMessage = {
      id: step,
      role: 'assistant',
      text: '',
      toolCalls: [
        { id: `${step}.1`, name: 'get_order_by_id', args: { order_id: '24601' } },
        { id: `${step}.2`, name: 'get_order_by_id', args: { order_id: '13579' } },
      ],
    };
    const tool: ChatMessage = {
      id: `${step}.1`,
      role: 'tool',
      callId: `${step}.1`,
      tool: 'get_order_by_id',
      args: { order_id: '24601' },
      result: null,
      text: 'done',
    };
    const extra: NewEvent[] = [
      { key: `delta:${step}:1`, type: 'message.delta', data: { messageId: step, chunk: 1, text: 'x' } },
      { key: `usage:${step}`, type: 'usage', data: { stepId: step } },
    ];
    const inserted = await writeBatch(app, ref, {
      messages: [user, assistant, tool],
      events: extra,
      usage: { stepId: step, model: 'offline', inputTokens: 3, outputTokens: 2, totalTokens: 5 },
    });
    assert.deepEqual(
      inserted.map((message) => message.id),
      [user.id, assistant.id, tool.id],
    );

    const { events, messages, usage } = await stored(ref.conversationId);
    assert.deepEqual(
      messages.map((row) => row.id),
      [user.id, assistant.id, tool.id],
    );
    assert.deepEqual(
      events.map((event) => event.key),
      [
        `message:${user.id}`,
        `message:${step}`,
        `tool-call:${step}.1`,
        `tool-call:${step}.2`,
        `message:${tool.id}`,
        `tool-result:${step}.1`,
        `delta:${step}:1`,
        `usage:${step}`,
      ],
    );
    assert.deepEqual(events[1]!.data, assistant);
    assert.deepEqual(events[5]!.data, { callId: `${step}.1`, tool: 'get_order_by_id', result: null });
    assert.ok(events.every((event) => event.user_id === 'alice'));
    assert.equal(usage.length, 1);
    assert.equal(usage[0].total_tokens, 5);

    // The transcript reads back what was given, a JSON null result included.
    const transcript = await asUser(app, 'alice', (client) => readTranscript(client, ref.conversationId));
    assert.deepEqual(transcript, [user, assistant, tool]);
  });

  test('retried, writes nothing twice; a message it finds written gets no events again', async () => {
    const ref = await conversation('alice');
    const first = userMessage('hello');
    const step = randomUUID();
    const batch = {
      messages: [first],
      events: [{ key: `turn-ended:${step}`, type: 'turn.ended' as const, data: { messageId: step } }],
      usage: { stepId: step, model: 'offline', inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    };
    await writeBatch(app, ref, batch);
    const once = await stored(ref.conversationId);

    assert.deepEqual(await writeBatch(app, ref, batch), [], 'a retry inserts no message');
    await Promise.all([writeBatch(app, ref, batch), writeBatch(app, ref, batch)]);
    assert.deepEqual(await stored(ref.conversationId), once);

    // The message event of a message that exists is not written again, even when its row is gone
    // (removed here as the owner): only a message's first write announces it.
    await admin.query('DELETE FROM events WHERE conversation_id = $1 AND key = $2', [ref.conversationId, `message:${first.id}`]);
    const second = userMessage('again');
    const inserted = await writeBatch(app, ref, { messages: [first, second] });
    assert.deepEqual(inserted, [second]);
    const { events, messages } = await stored(ref.conversationId);
    assert.deepEqual(
      messages.map((row) => row.id),
      [first.id, second.id],
    );
    assert.deepEqual(
      events.map((event) => event.key),
      [`turn-ended:${step}`, `message:${second.id}`],
    );
  });

  test('inside asUser it joins the transaction: a rollback undoes it', async () => {
    const ref = await conversation('alice');
    await assert.rejects(
      asUser(app, 'alice', async (client) => {
        await insertMessages(client, ref.conversationId, 'alice', [userMessage('never kept')]);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.deepEqual((await stored(ref.conversationId)).messages, []);
  });

  test("carries a model call's ledger settlement in its own transaction: written with it, undone with it", async () => {
    const ref = await conversation('alice');
    const settle = (key: string) => ({
      call: { ...ref, key, kind: 'chat' as const, model: 'gemini-2.5-flash' },
      used: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });
    const ledger = async () =>
      (await admin.query('SELECT key, settled, tokens FROM usage_ledger WHERE conversation_id = $1 ORDER BY key', [ref.conversationId])).rows;
    const kept = userMessage('kept');
    await writeBatch(app, ref, { messages: [kept], settle: settle('chat:kept') });
    await assert.rejects(
      asUser(app, 'alice', async (client) => {
        await writeBatch(client, ref, { messages: [userMessage('never kept')], settle: settle('chat:never') });
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.deepEqual(await ledger(), [{ key: 'chat:kept', settled: true, tokens: 15 }]);
    assert.deepEqual(
      (await stored(ref.conversationId)).messages.map((row) => row.id),
      [kept.id],
    );
  });

  test('text PostgreSQL cannot store is repaired, in rows and events', async () => {
    const ref = await conversation('alice');
    const message: ChatMessage = {
      id: randomUUID(),
      role: 'assistant',
      text: 'bad \u0000 and \ud83d.',
      structured: { 'k\u0000': 'v\udc00' },
    };
    await writeBatch(app, ref, { messages: [message], events: [{ key: 'progress:1', type: 'progress', data: { note: 'x\u0000y' } }] });
    const { events, messages } = await stored(ref.conversationId);
    assert.equal(messages[0]!.text, 'bad \uFFFD and \uFFFD.');
    assert.deepEqual(events[0]!.data.structured, { 'k\uFFFD': 'v\uFFFD' });
    assert.deepEqual(events[1]!.data, { note: 'x\uFFFDy' });
  });

  test('writes then reads the transcript in one go, and reads without writing', async () => {
    const ref = await conversation('alice');
    const first = userMessage('one');
    assert.deepEqual(await writeBatchReadTranscript(app, ref, { messages: [first], events: [] }), [first]);
    const second = userMessage('two');
    assert.deepEqual(await writeBatchReadTranscript(app, ref, { messages: [second], events: [] }), [first, second]);
    assert.deepEqual(await writeBatchReadTranscript(app, ref, {}), [first, second]);
    // a retry finds its messages written and reads them once
    assert.deepEqual(await writeBatchReadTranscript(app, ref, { messages: [second], events: [] }), [first, second]);
  });

  test('acts for its user for that statement only: the pooled session keeps no identity', async () => {
    const single = createPool(db.url, { max: 1 });
    try {
      const ref = await conversation('alice');
      await writeBatch(single, ref, { messages: [userMessage('hi')] });
      const { rows } = await single.query('SELECT brigade_current_user() AS acting');
      assert.equal(rows[0].acting, null);
      const visible = await single.query('SELECT count(*) AS n FROM messages');
      assert.equal(visible.rows[0].n, 0, 'nothing is visible without an identity');
    } finally {
      await single.end();
    }
  });
});

describe("another user's conversation", () => {
  test('cannot be written through a batch: refused, nothing written', async () => {
    const alice = await conversation('alice');
    const intruder = { conversationId: alice.conversationId, userId: 'mallory' };
    const refused = { code: '42501', message: `conversation ${alice.conversationId} is not one of this user's` };
    await assert.rejects(writeBatch(app, intruder, { messages: [userMessage('hijack')] }), refused);
    await assert.rejects(writeBatch(app, intruder, { events: [{ key: 'progress:x', type: 'progress', data: {} }] }), refused);
    await assert.rejects(
      writeBatch(app, intruder, { usage: { stepId: 's', model: 'm', inputTokens: 1, outputTokens: 1, totalTokens: 2 } }),
      refused,
    );
    await assert.rejects(writeBatchReadTranscript(app, intruder, { messages: [userMessage('hijack')], events: [] }), refused);
    // A read alone finds nothing, as every read under row-level security does.
    await writeBatch(app, alice, { messages: [userMessage('private')] });
    assert.deepEqual(await writeBatchReadTranscript(app, intruder, {}), []);
    const { events, messages, usage } = await stored(alice.conversationId);
    assert.deepEqual(
      messages.map((row) => row.text),
      ['private'],
    );
    assert.equal(events.length, 1);
    assert.equal(usage.length, 0);
  });

  test('cannot be written from a transaction acting for someone else', async () => {
    const alice = await conversation('alice');
    const mallory = await conversation('mallory');
    await assert.rejects(
      asUser(app, 'mallory', (client) =>
        writeBatch(client, { conversationId: alice.conversationId, userId: 'alice' }, { messages: [userMessage('x')] }),
      ),
      { code: '42501', message: 'this transaction acts for another user' },
    );
    await assert.rejects(
      asUser(app, 'mallory', (client) => writeBatch(client, alice, { messages: [userMessage('x')] })),
      { code: '42501' },
    );
    // and the same transaction may write its own conversation
    await asUser(app, 'mallory', (client) => writeBatch(client, mallory, { messages: [userMessage('mine')] }));
    assert.deepEqual((await stored(alice.conversationId)).messages, []);
    assert.equal((await stored(mallory.conversationId)).messages.length, 1);
  });

  test("cannot be written through insertMessages or insertEvents either (the delta writer's path)", async () => {
    const alice = await conversation('alice');
    await assert.rejects(
      asUser(app, 'mallory', (client) =>
        insertEvents(client, alice.conversationId, 'mallory', [{ key: 'delta:x:1', type: 'message.delta', data: {} }]),
      ),
      { code: '42501' },
    );
    await assert.rejects(
      asUser(app, 'mallory', (client) => insertMessages(client, alice.conversationId, 'mallory', [userMessage('x')])),
      { code: '42501' },
    );
    const { events, messages } = await stored(alice.conversationId);
    assert.deepEqual([events, messages], [[], []]);
  });

  test('cannot hold a tool call: refused before the tool runs', async () => {
    const alice = await conversation('alice');
    let ran = false;
    for (const deferCommit of [false, true]) {
      await assert.rejects(
        withToolCall(
          app,
          { conversationId: alice.conversationId, userId: 'mallory', callId: 'c1' },
          async () => {
            ran = true;
          },
          { deferCommit },
        ),
        { code: '42501' },
      );
    }
    assert.equal(ran, false);
  });
});

describe('a tool call', () => {
  test('runs once: a retry gets the recorded result, a JSON null included', async () => {
    const ref = await conversation('alice');
    let runs = 0;
    const config = loadConfig({});
    const runTool = createRunTool({
      pool: app,
      config,
      taskModel: selectTaskModel(config, builtInCatalog()),
      implementations: {
        nothing_found: async (_args, { db: client }) => {
          runs += 1;
          await client.query("SELECT set_config('test.touched', 'yes', true)");
          return null;
        },
        lookup: async () => {
          runs += 1;
          return { order: '24601', note: 'bad \u0000' };
        },
      },
    });
    const input = { ...ref, agent: 'support' as const, callId: 'call-null', tool: 'nothing_found', args: {} };
    assert.equal(await runTool(input), null);
    assert.equal(await runTool(input), null);
    // a model step's inline call looks its record up in the round trip that defers its commit
    assert.equal(await runTool(input, { deferCommit: true }), null);
    assert.equal(runs, 1, 'the recorded null is a result, not a missing record');

    const lookup = { ...ref, agent: 'support' as const, callId: 'call-lookup', tool: 'lookup', args: { order_id: '24601' } };
    assert.deepEqual(await runTool(lookup), { order: '24601', note: 'bad \uFFFD' });
    assert.deepEqual(await runTool(lookup), { order: '24601', note: 'bad \uFFFD' });
    assert.equal(runs, 2);

    const { calls, events, messages } = await stored(ref.conversationId);
    assert.deepEqual(
      calls.map((row) => [row.call_id, row.result]),
      [
        ['call-null', null],
        ['call-lookup', { order: '24601', note: 'bad \uFFFD' }],
      ],
    );
    assert.deepEqual(
      messages.map((row) => row.id),
      ['call-null', 'call-lookup'],
    );
    assert.deepEqual(
      events.map((event) => event.key),
      ['message:call-null', 'tool-result:call-null', 'message:call-lookup', 'tool-result:call-lookup'],
    );
  });

  test('recorded twice (two attempts at once), the second fails and its effect rolls back', async () => {
    const ref = { ...(await conversation('alice')), callId: 'call-twice' };
    await withToolCall(app, ref, (client) => recordToolCall(client, ref, { tool: 't', args: {}, result: { n: 1 } }));
    await assert.rejects(
      withToolCall(app, ref, async (client) => {
        await client.query(
          `INSERT INTO events (conversation_id, user_id, key, type, data) VALUES ($1, 'alice', 'effect', 'progress', '{}')`,
          [ref.conversationId],
        );
        await recordToolCall(client, ref, { tool: 't', args: {}, result: { n: 2 } });
      }),
      { code: '23505' },
    );
    const { calls, events } = await stored(ref.conversationId);
    assert.deepEqual(
      calls.map((row) => row.result),
      [{ n: 1 }],
    );
    assert.ok(!events.some((event) => event.key === 'effect'), 'the second attempt left nothing');
  });
});
