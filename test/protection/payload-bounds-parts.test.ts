// The bounds of what crosses Temporal and of what a tool returns to the model, as pure functions
// (src/shared/payload-bounds.ts, src/activities/tool-result-cap.ts) and an agent's tool through runTool on real PostgreSQL; test/protection/payload-bounds.test.ts drives them
// end to end with a misbehaving MCP server.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { createRunTool, runToolActivity } from '../../src/activities/run-tool.ts';
import { capToolResult } from '../../src/activities/tool-result-cap.ts';
import { loadConfig } from '../../src/config.ts';
import { createPool } from '../../src/db/pool.ts';
import { withClient } from '../../src/db/with-client.ts';
import { selectTaskModel } from '../../src/model/select.ts';
import type { AgentName } from '../../src/shared/messages.ts';
import { freshDatabase } from '../support/harness.ts';
import { addMessages, emptyTranscript } from '../../web/src/transcript.ts';
import { TURN_RESULT_MAX_BYTES, boundTurnResult, cutText, jsonBytes, utf8Bytes } from '../../src/shared/payload-bounds.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';

describe('bounds, as functions', () => {
  test('a result over the cap keeps its beginning, says it was cut, and fits the cap as JSON', () => {
    const text = `${'"quoted"\n'.repeat(50_000)}end`;
    const capped = capToolResult({ text, structured: { small: 1 } }, 4096) as Record<string, any>;
    assert.ok(jsonBytes(capped) <= 4096, `${jsonBytes(capped)} bytes`);
    assert.ok(text.startsWith(capped.text));
    assert.deepEqual(capped.structured, { small: 1 });
    assert.deepEqual(capped.truncated, { bytes: jsonBytes({ text, structured: { small: 1 } }), maxBytes: 4096 });
    assert.match(capped.note, /cut/);
    const error = capToolResult({ error: 'e'.repeat(10_000) }, 2048) as Record<string, any>;
    assert.ok(typeof error.error === 'string' && error.error.length > 100 && jsonBytes(error) <= 2048);
    const small = { text: 'fine' };
    assert.equal(capToolResult(small, 2048), small);
  });

  test('text is cut on code points and measured in UTF-8', () => {
    assert.equal(utf8Bytes('é😀a'), 2 + 4 + 1);
    assert.equal(cutText('😀😀', 5), '😀');
    assert.equal(cutText('ab', 5), 'ab');
  });

  test("an Update's response stays under its budget whatever the messages", () => {
    const big = (id: string): ChatMessage => ({
      id,
      role: 'tool',
      callId: id,
      tool: 't',
      args: {},
      text: 't done',
      result: { text: 'x'.repeat(300_000) },
    });
    const bounded = boundTurnResult({ messages: Array.from({ length: 50 }, (_, i) => big(`c${i}`)), pending: [] });
    assert.ok(jsonBytes(bounded) <= TURN_RESULT_MAX_BYTES + 1024, `${jsonBytes(bounded)} bytes`);
    assert.equal(bounded.messages.length, 50);
    assert.ok(bounded.messages.every((message, i) => message.id === `c${i}` && message.elided));
  });
});

describe("an agent's own tool with a large result", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let pool: pg.Pool;
  before(async () => {
    database = await freshDatabase();
    pool = createPool(database.url);
  });
  after(async () => {
    await pool?.end();
    await database?.drop();
  });

  test('is capped before it is recorded, and crosses as a local-activity marker only as a stand-in', async () => {
    const conversationId = randomUUID();
    await withClient(database.adminUrl, (admin) =>
      admin.query(`INSERT INTO conversations (id, user_id, agent, title, workflow_id) VALUES ($1, 'alice', 'support', 't', $2)`, [
        conversationId,
        `w-${conversationId}`,
      ]),
    );
    const rows = Array.from({ length: 5000 }, (_, index) => ({ index, note: 'n'.repeat(100) }));
    const config = loadConfig({ DATABASE_URL: database.url, TEMPORAL_ADDRESS: '127.0.0.1:1', TOOL_RESULT_MAX_BYTES: '65536' });
    const runTool = createRunTool({
      pool,
      config,
      taskModel: selectTaskModel(config),
      implementations: { list_everything: async () => ({ rows }) },
    });
    const input = { conversationId, userId: 'alice', agent: 'support' as AgentName, callId: 'step-1.1', tool: 'list_everything', args: {} };
    const seen = (await runTool(input)) as Record<string, any>;
    assert.ok(jsonBytes(seen) <= 65536, `${jsonBytes(seen)} bytes`);
    assert.deepEqual(seen.truncated, { bytes: jsonBytes({ rows }), maxBytes: 65536 });
    assert.ok(seen.text.startsWith('{"rows":[{"index":0,'));
    const [record] = await withClient(
      database.adminUrl,
      async (admin) => (await admin.query('SELECT result FROM tool_calls WHERE call_id = $1', ['step-1.1'])).rows,
    );
    assert.deepEqual(record.result, seen, 'the record is what the model sees');
    // the local activity (a retry finds the record) hands the workflow a stand-in
    const marker = (await runToolActivity(runTool)(input)) as Record<string, any>;
    assert.equal(marker.elided, true);
    assert.equal(marker.bytes, jsonBytes(seen));
    assert.ok(jsonBytes(marker) < 4096);
  });
});

describe("the web client's transcript", () => {
  test('a copy an Update shortened gives way to the whole message from the event stream, never the reverse', () => {
    const whole: ChatMessage = {
      id: 'c1',
      role: 'tool',
      callId: 'c1',
      tool: 't',
      args: {},
      text: 't done',
      result: { text: 'x'.repeat(20_000) },
    };
    const shortened = boundTurnResult({ messages: [whole], pending: [] }).messages[0]!;
    assert.equal(shortened.elided, true);
    const fromTurn = addMessages(emptyTranscript(), [shortened]);
    const thenStream = addMessages(fromTurn, [whole]);
    assert.deepEqual(thenStream.messages.c1, whole);
    assert.deepEqual(thenStream.order, ['c1']);
    const streamFirst = addMessages(addMessages(emptyTranscript(), [whole]), [shortened]);
    assert.deepEqual(streamFirst.messages.c1, whole);
  });
});
