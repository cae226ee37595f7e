// The bounds of what crosses Temporal and of what a tool returns to the model, as pure functions
// (src/shared/payload-bounds.ts, src/activities/tool-result-cap.ts); test/payload-bounds.test.ts drives them
// end to end with a misbehaving MCP server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { capToolResult } from '../src/activities/tool-result-cap.ts';
import { TURN_RESULT_MAX_BYTES, boundTurnResult, cutText, jsonBytes, utf8Bytes } from '../src/shared/payload-bounds.ts';
import type { ChatMessage } from '../src/shared/messages.ts';

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
    const big = (id: string): ChatMessage => ({ id, role: 'tool', callId: id, tool: 't', args: {}, text: 't done', result: { text: 'x'.repeat(300_000) } });
    const bounded = boundTurnResult({ messages: Array.from({ length: 50 }, (_, i) => big(`c${i}`)), pending: [] });
    assert.ok(jsonBytes(bounded) <= TURN_RESULT_MAX_BYTES + 1024, `${jsonBytes(bounded)} bytes`);
    assert.equal(bounded.messages.length, 50);
    assert.ok(bounded.messages.every((message, i) => message.id === `c${i}` && message.elided));
  });
});

