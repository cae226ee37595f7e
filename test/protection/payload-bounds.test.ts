// Issue 28, item 1: no payload can end a conversation. A misbehaving MCP server (test/support/mcp-bulky.ts)
// answers with megabytes, several times per turn, against the real Temporal dev server and the Gemini-wire
// test server. Temporal refuses a payload over 2 MB: before, one 3 MB result failed its activity's completion
// while PostgreSQL kept it whole and the model was sent all of it, and results that added up past 2 MB made
// the Update's response too large, which terminated the workflow (every later message a 404). Now what the
// model gets is capped with a note (TOOL_RESULT_MAX_BYTES), the record and the transcript say exactly that,
// what crosses Temporal is bounded, and the conversation takes its next message.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import proto from '@temporalio/proto';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type BulkyHttp, bulk, startBulkyHttp } from '../support/mcp-bulky.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const TEMPORAL_LIMIT = 2 * 1024 * 1024;
/** TOOL_RESULT_MAX_BYTES's default */
const CAP = 128 * 1024;
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

let fake: FakeGemini;
let bulky: BulkyHttp;
let wordy: BulkyHttp;
let app: TestApp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-bounds-'));

before(async () => {
  fake = await startFakeGemini();
  bulky = await startBulkyHttp();
  wordy = await startBulkyHttp({ wordy: true });
  const configPath = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { bulky: { url: bulky.url, agents: ['support'] }, wordy: { url: wordy.url, agents: ['recipes'] } } }),
  );
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'bounds-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '60s',
      BRIGADE_MCP_CONFIG: configPath,
      DATA_DIR: path.join(dir, 'data'),
    },
  });
});
after(async () => {
  await app?.stop();
  await bulky?.close();
  await wordy?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const open = async (agent = 'support') => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent, title: 'bounds' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
};
const say = async (id: string, text: string) => {
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body).slice(0, 2000));
  return turn.body;
};
const transcriptTools = async (id: string) => {
  const got = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(got.status, 200, JSON.stringify(got.body).slice(0, 2000));
  return (got.body.messages as any[]).filter((message) => message.role === 'tool');
};
/** the function responses of the model's latest request */
const sentToModel = () =>
  fake.requests
    .at(-1)!
    .body.contents!.flatMap((content) => content.parts ?? [])
    .filter((part) => part.functionResponse)
    .map((part) => part.functionResponse);
const records = (id: string) =>
  app.adminQuery<{ call_id: string; result: any }>('SELECT call_id, result FROM tool_calls WHERE conversation_id = $1 ORDER BY call_id', [
    id,
  ]);

/** The size of the conversation's workflow history (its current run), encoded as the server keeps it. */
async function historyBytes(id: string): Promise<number> {
  const history = await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory();
  return proto.temporal.api.history.v1.History.encode(history).finish().length;
}

/** The conversation is alive: it takes another message and answers it. */
async function goesOn(id: string) {
  fake.script(reply.text('Still here.'));
  const next = await say(id, 'Are you still there?');
  assert.equal(next.messages.at(-1).text, 'Still here.');
}

describe('a misbehaving MCP server cannot end a conversation', () => {
  test('three results of 3 MB in one turn: the model gets each capped with a note, the record says so, the conversation goes on', async (t) => {
    const id = await open();
    const tags = ['alpha', 'bravo', 'charlie'];
    fake.script(reply.calls(...tags.map((tag) => ({ name: 'bulky__dump', args: { tag, kb: 3072 } }))), reply.text('Read it all.'));
    const turn = await say(id, 'Dump three big things');
    assert.ok(jsonBytes(turn) < TEMPORAL_LIMIT, `the response is ${jsonBytes(turn)} bytes`);
    assert.equal(turn.messages.at(-1).text, 'Read it all.');
    t.diagnostic(
      `9 MB of results: the turn's answer ${jsonBytes(turn)} bytes, the model's request ${jsonBytes(fake.requests.at(-1)!.body)} bytes, the run's history ${await historyBytes(id)} bytes`,
    );
    const toolsInTurn = turn.messages.filter((message: any) => message.role === 'tool');
    assert.equal(toolsInTurn.length, 3);
    for (const message of toolsInTurn) assert.doesNotMatch(message.text, /failed/, 'no tool failed');

    // What the model was sent: each result cut to the cap, beginning intact, with the note.
    const responses = sentToModel();
    assert.equal(responses.length, 3);
    for (const [index, response] of responses.entries()) {
      assert.ok(jsonBytes(response.response) <= CAP + 256, `result ${index} sent to the model is ${jsonBytes(response.response)} bytes`);
      const whole = JSON.stringify(response.response);
      assert.match(whole, new RegExp(`${tags[index]} 000000 `));
      assert.match(whole, /This result was cut/);
    }
    // The transcript and the tool-call record hold exactly what the model saw.
    const stored = await transcriptTools(id);
    const recorded = await records(id);
    assert.equal(stored.length, 3);
    for (const message of stored) {
      assert.equal(message.result.truncated.maxBytes, CAP);
      assert.ok(message.result.truncated.bytes > 3_000_000);
      assert.ok(jsonBytes(message.result) <= CAP);
      const record = recorded.find((row) => row.call_id === message.callId)!;
      assert.deepEqual(record.result, message.result);
      const response = responses.find(
        (r) => r.id === message.callId || JSON.stringify(r.response).includes(message.result.text.slice(0, 40)),
      );
      assert.ok(response, 'the model was sent this result');
    }
    await goesOn(id);
  });

  test('twenty results of 200 KB (4 MB together) in one turn: the response is bounded and the conversation goes on', async (t) => {
    const id = await open();
    const calls = Array.from({ length: 20 }, (_, i) => ({ name: 'bulky__dump', args: { tag: `t${i}`, kb: 200 } }));
    fake.script(reply.calls(...calls), reply.text('Twenty read.'));
    const turn = await say(id, 'Dump twenty medium things');
    assert.ok(jsonBytes(turn) < TEMPORAL_LIMIT, `the response is ${jsonBytes(turn)} bytes`);
    assert.equal(turn.messages.at(-1).text, 'Twenty read.');
    t.diagnostic(`4 MB of results: the turn's answer ${jsonBytes(turn)} bytes, the run's history ${await historyBytes(id)} bytes`);
    const toolsInTurn = turn.messages.filter((message: any) => message.role === 'tool');
    assert.equal(toolsInTurn.length, 20);
    // The response carries stand-ins with ids; the API has each whole.
    assert.ok(
      toolsInTurn.every((message: any) => message.elided === true && message.callId),
      'large results are elided in the response',
    );
    const stored = await transcriptTools(id);
    assert.equal(stored.length, 20);
    for (const message of stored) {
      assert.equal(message.elided, undefined);
      assert.ok(jsonBytes(message.result) > 100_000 && jsonBytes(message.result) <= CAP);
    }
    await goesOn(id);
  });

  test('a 3 MB error and 3 MB of structured content: both capped, the turn says what the model saw', async () => {
    const id = await open();
    fake.script(
      reply.calls(
        { name: 'bulky__dump_error', args: { tag: 'oops', kb: 3072 } },
        { name: 'bulky__dump_structured', args: { tag: 'rows', kb: 3072 } },
      ),
      reply.text('One failed, one was cut.'),
    );
    const turn = await say(id, 'Fail loudly and return rows');
    assert.ok(jsonBytes(turn) < TEMPORAL_LIMIT);
    const [failed, rows] = await transcriptTools(id);
    assert.match(failed.text, /^bulky__dump_error failed: oops 000000 /);
    assert.ok(jsonBytes(failed.result) <= CAP);
    assert.match(failed.result.note, /cut/);
    assert.ok(jsonBytes(rows.result) <= CAP);
    assert.equal(rows.result.truncated.maxBytes, CAP);
    assert.match(rows.result.note, /cut/);
    // the turn's copy of the failed call says the same failure, from its beginning
    const inTurn = turn.messages.find((message: any) => message.callId === failed.callId);
    assert.match(inTurn.text, /^bulky__dump_error failed: oops 000000 /);
    await goesOn(id);
  });

  test('a model reply whose tool calls are megabytes is a failed model call, not a dead conversation', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'bulky__dump', args: { tag: 'x'.repeat(1_200_000), kb: 1 } }));
    // Before, the runtime asked the model again (the call's arguments did not fit), then answered with both
    // 1.2 MB copies of the arguments in the Update's response.
    fake.scriptFn(() => reply.text('Let me try again.'));
    try {
      const turn = await say(id, 'Call with huge arguments');
      assert.ok(jsonBytes(turn) < TEMPORAL_LIMIT, `the response is ${jsonBytes(turn)} bytes`);
      assert.match(turn.messages.at(-1).text, /^The model could not answer \(the model's reply was too large/);
    } finally {
      fake.reset();
    }
    await goesOn(id);
  });

  test('a tool whose description is 3 MB: offered with it cut, and it runs', async () => {
    // (a recipes conversation: before, the 3 MB list failed its activity and with it every turn of every
    // conversation that lists the server)
    const id = await open('recipes');
    fake.script(reply.calls({ name: 'wordy__long_winded', args: {} }), reply.text('It spoke briefly.'));
    const turn = await say(id, 'Ask the long-winded one');
    assert.equal(turn.messages.at(-1).text, 'It spoke briefly.');
    const declarations = fake.requests.at(-2)!.body.tools!.flatMap((tools) => tools.functionDeclarations ?? []);
    const declared = declarations.find((declaration) => declaration.name === 'wordy__long_winded') as { description: string } | undefined;
    assert.ok(declared, 'the tool is offered');
    assert.match(declared.description, /^word 000000 /);
    assert.ok(Buffer.byteLength(declared.description) <= 2048, `${Buffer.byteLength(declared.description)} bytes`);
    const [tool] = await transcriptTools(id);
    assert.equal(tool.result.text, 'Said briefly.');
    await goesOn(id);
  });

  test('a question of 3 MB: asked with its message cut, answered, and the conversation goes on', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'bulky__ask_at_length', args: { tag: 'why', kb: 3072 } }));
    const parked = await say(id, 'Ask me something long');
    assert.equal(parked.pending.length, 1, JSON.stringify(parked).slice(0, 500));
    const [question] = parked.pending;
    assert.equal(question.kind, 'question');
    assert.match(question.prompt, /^why 000000 /);
    assert.ok(Buffer.byteLength(question.prompt) <= 4096, `${Buffer.byteLength(question.prompt)} bytes`);
    fake.script(reply.text('You declined.'));
    const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: question.id, decision: 'decline' } });
    assert.equal(decided.status, 200, JSON.stringify(decided.body).slice(0, 500));
    const [tool] = await transcriptTools(id);
    assert.equal(tool.result.text, 'The user answered: decline.');
    await goesOn(id);
  });

  test('the text of the bulky server is what the test thinks it is', () => {
    assert.equal(bulk('a', 3).length, 3 * 1024 - 1);
  });
});
