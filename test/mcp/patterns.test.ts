// No pattern a tool supplies runs in workflow code (issue 28, item 2). A misbehaving MCP server
// (test/support/mcp-patterns-server.ts) declares `^(a+)+$`; the scripted Gemini server has the model call it
// with "aaaa…a!", which on JavaScript's backtracking RegExp takes longer than any workflow task may. The
// workflow checks a copy of the schema without patterns; the MCP activity checks the patterns with RE2 and
// the model gets the refusal as the tool's result; the conversation takes its next message.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jsonSchemaArgs } from '../../src/mcp/json-schema.ts';
import { PATTERN_TEXT_LIMIT, argumentsRefusal } from '../../src/mcp/pattern-check.ts';
import { schemaWithoutPatterns } from '../../src/mcp/schema-without-patterns.ts';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { CATASTROPHIC, type PatternsServer, startPatternsServer } from '../support/mcp-patterns-server.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const WORD_SCHEMA = { type: 'object', properties: { word: { type: 'string', pattern: CATASTROPHIC } }, required: ['word'] };

describe("the workflow's check of MCP arguments", () => {
  test('runs no pattern: a catastrophic one is not matched in workflow code (the activity checks it)', () => {
    // 2^26 steps on a backtracking engine: seconds; the copy without patterns takes none of them.
    const schema = jsonSchemaArgs(WORD_SCHEMA);
    const started = performance.now();
    const checked = schema.safeParse({ word: `${'a'.repeat(26)}!` });
    const ms = performance.now() - started;
    assert.equal(checked.success, true, 'the pattern is left to the activity');
    assert.ok(ms < 500, `checked in ${ms.toFixed(0)} ms`);
    // what the copy still checks: structure and bounds
    assert.equal(jsonSchemaArgs(WORD_SCHEMA).safeParse({}).success, false, 'a required property is still required');
    assert.equal(jsonSchemaArgs(WORD_SCHEMA).safeParse({ word: 7 }).success, false, 'a type is still checked');
  });

  test('the copy keeps a property named "pattern", drops patternProperties and formats, and a $ref into data runs nothing', () => {
    const copy = schemaWithoutPatterns({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pattern: { type: 'string', pattern: CATASTROPHIC, format: 'email' }, sneaky: { $ref: '#/x-hidden' } },
      patternProperties: { '^x-': { type: 'number' } },
      additionalProperties: false,
      'x-hidden': { type: 'string', pattern: CATASTROPHIC },
    });
    assert.deepEqual(copy, { type: 'object', properties: { pattern: { type: 'string' }, sneaky: { $ref: '#/x-hidden' } } });
    const viaData = jsonSchemaArgs({
      type: 'object',
      properties: { a: { enum: [{ type: 'string', pattern: CATASTROPHIC }] }, b: { $ref: '#/properties/a/enum/0' } },
    });
    viaData.safeParse({ b: 'warm' });
    const started = performance.now();
    viaData.safeParse({ b: `${'a'.repeat(26)}!` });
    assert.ok(performance.now() - started < 500, 'a pattern reached through a $ref into an enum value is not run');
  });

  test("the activity's check runs patterns in linear time and refuses strings past the limit", () => {
    const started = performance.now();
    const refusal = argumentsRefusal(WORD_SCHEMA, { word: `${'a'.repeat(20_000)}!` });
    assert.ok(performance.now() - started < 2_000, 'RE2 does not backtrack');
    assert.match(refusal ?? '', /\/word must match pattern/);
    assert.equal(argumentsRefusal(WORD_SCHEMA, { word: 'aaaa' }), undefined);
    const long = argumentsRefusal(WORD_SCHEMA, { word: 'a'.repeat(PATTERN_TEXT_LIMIT + 1) });
    assert.match(long ?? '', new RegExp(`at most ${PATTERN_TEXT_LIMIT}`));
    // a pattern RE2 cannot run (lookahead) is left to the server, never run by a backtracking engine
    assert.equal(
      argumentsRefusal({ type: 'object', properties: { w: { type: 'string', pattern: '^(?=a)(a+)+$' } } }, { w: `${'a'.repeat(30)}!` }),
      undefined,
    );
  });
});

describe('a tool whose schema has a catastrophic pattern', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-patterns-'));
  let fake: FakeGemini;
  let patterns: PatternsServer;
  let app: TestApp;

  before(async () => {
    fake = await startFakeGemini();
    patterns = await startPatternsServer();
    const configPath = path.join(dir, 'mcp.json');
    fs.writeFileSync(configPath, JSON.stringify({ mcpServers: { hostile: { url: patterns.url, agents: ['support'] } } }));
    app = await startTestApp({
      env: { GEMINI_API_KEY: 'patterns-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '10s', BRIGADE_MCP_CONFIG: configPath },
    });
  });
  after(async () => {
    await app?.stop();
    await patterns?.close();
    await fake?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** a turn, or a failure after 60 s: on a wedged workflow the Update never answers */
  const say = async (id: string, text: string) => {
    const answer = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to "${text}" within 60 s: the conversation is wedged`)), 60_000);
    });
    try {
      const turn = await Promise.race([answer, late]);
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      return turn.body;
    } finally {
      clearTimeout(timer);
    }
  };
  const lastFunctionResponse = () => {
    const parts = fake.requests.at(-1)!.body.contents!.flatMap((content) => content.parts ?? []);
    return parts.filter((part) => part.functionResponse).at(-1)?.functionResponse;
  };

  test('does not wedge the conversation: the model gets a refusal, the server no call, and the next message is answered', async () => {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'patterns' } });
    assert.equal(created.status, 201);
    const id: string = created.body.id;

    const evil = `${'a'.repeat(40)}!`;
    fake.script(reply.calls({ name: 'hostile__match_word', args: { word: evil } }), reply.text('The tool refused that word.'));
    const turn = await say(id, "Is this word all a's?");
    const tool = turn.messages.find((message: { role: string }) => message.role === 'tool');
    assert.equal(tool.tool, 'hostile__match_word');
    assert.match(tool.result.error, /not called: \/word must match pattern "\^\(a\+\)\+\$"/);
    assert.match(JSON.stringify(lastFunctionResponse()), /must match pattern/, 'the model was told why');
    assert.equal(turn.messages.at(-1).text, 'The tool refused that word.');
    assert.equal(patterns.calls.length, 0, 'the refused call never reached the server');

    fake.script(reply.calls({ name: 'hostile__match_word', args: { word: 'aaaa' } }), reply.text("Yes, all a's."));
    const next = await say(id, 'And this one?');
    assert.equal(next.messages.at(-1).text, "Yes, all a's.");
    assert.deepEqual(patterns.calls, [{ tool: 'match_word', args: { word: 'aaaa' } }]);

    // patternProperties: enforced by the activity, with a property that is named "pattern"
    fake.script(reply.calls({ name: 'hostile__label', args: { pattern: 'p', 'x-size': 'big' } }), reply.text('Refused.'));
    const labelled = await say(id, 'Label it');
    const refused = labelled.messages.find((message: { role: string }) => message.role === 'tool');
    assert.match(refused.result.error, /\/x-size must be number/);
    fake.script(reply.calls({ name: 'hostile__label', args: { pattern: 'p', 'x-size': 3 } }), reply.text('Labelled.'));
    await say(id, 'Label it with a number');
    assert.deepEqual(patterns.calls.at(-1), { tool: 'label', args: { pattern: 'p', 'x-size': 3 } });

    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.status, 200);
    assert.equal(view.body.status, 'idle');
  });
});
