// MCP calls against a server that misbehaves (issue 29, finding 3): callTimeout is the limit until a question
// actually arrives (not callTimeout plus the question's deadline on every call); a server that never answers
// is reported as a timeout and retried only as its timeoutAttempts say (not as "unreachable" three times); and
// Stop during a slow call says "stopped while the server was working on it; it may have completed" in the
// transcript and in the tool-call record the export reads. A real MCP server (test/support/mcp-sluggish.ts)
// over Streamable HTTP, the real @google/genai client against the scripted Gemini server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type SluggishServer, startSluggishServer } from '../support/mcp-sluggish.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { metricsText } from '../../src/api/metrics.ts';

const STOPPED_WORDS = 'stopped while the server was working on it; it may have completed';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-time-'));
const configPath = path.join(dir, 'mcp.json');

let fake: FakeGemini;
let server: SluggishServer;
let app: TestApp;

before(async () => {
  fake = await startFakeGemini();
  server = await startSluggishServer();
  fs.writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        // the question deadline stays at its default (10 minutes): a call without a question must not wait for it
        sluggish: { url: server.url, agents: ['support'], callTimeout: '2s' },
        stockpot: { url: server.url, agents: ['support'], callTimeout: '60s' },
      },
    }),
  );
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'mcp-time-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '10s',
      BRIGADE_MCP_CONFIG: configPath,
      DATA_DIR: path.join(dir, 'data'),
    },
  });
});
after(async () => {
  await app?.stop();
  await server?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const open = async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'mcp time' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
};
/** a turn, or a failure once `withinMs` have passed (the old runtime held such a turn for 10 minutes and more) */
async function say(id: string, text: string, withinMs: number) {
  const started = Date.now();
  const turn = await Promise.race([
    app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } }),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the turn was still running after ${withinMs} ms`)), withinMs)),
  ]);
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return { body: turn.body, ms: Date.now() - started };
}
const toolMessage = (messages: any[]) => messages.find((message) => message.role === 'tool');

describe('MCP time', () => {
  test('a server that never answers holds the turn for callTimeout, once, and is reported as a timeout', async () => {
    const id = await open();
    fake.script(
      reply.calls({ name: 'sluggish__never_answers', args: { what: 'stock' } }),
      reply.text('The kitchen server did not answer in time.'),
    );
    const { body, ms } = await say(id, 'Make stock', 60_000);
    const tool = toolMessage(body.messages);
    assert.match(tool.result.error, /did not answer within 2 s \(timed out\)/);
    assert.doesNotMatch(tool.result.error, /could not be reached/);
    assert.equal(tool.result.status, 'timeout');
    assert.equal(server.calls.never_answers, 1, 'a timed-out call is not called again by default (timeoutAttempts 1)');
    assert.ok(ms < 30_000, `the turn took ${ms} ms`);
    // the model is told it was a timeout
    const parts = fake.requests.at(-1)!.body.contents!.flatMap((content) => content.parts ?? []);
    assert.match(JSON.stringify(parts.filter((part) => part.functionResponse).at(-1)), /timed out/);
    // counted under the server's configured name, never a label made of the server's own tool names
    const metrics = await metricsText();
    assert.match(metrics, /brigade_tool_calls_total\{tool="mcp:sluggish"\}/);
    assert.doesNotMatch(metrics, /never_answers/);
  });

  test("a timeout is retried as the server's timeoutAttempts say, each attempt bounded by callTimeout", async () => {
    // its own app: a server whose timed-out calls may be tried twice
    const patientConfig = path.join(dir, 'patient.json');
    fs.writeFileSync(
      patientConfig,
      JSON.stringify({ mcpServers: { patient: { url: server.url, agents: ['support'], callTimeout: '2s', timeoutAttempts: 2 } } }),
    );
    const patientApp = await startTestApp({
      env: { GEMINI_API_KEY: 'mcp-time-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '10s', BRIGADE_MCP_CONFIG: patientConfig },
    });
    try {
      const before = server.calls.never_answers ?? 0;
      const created = await patientApp.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'patient' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      fake.script(reply.calls({ name: 'patient__never_answers', args: { what: 'stock' } }), reply.text('Still nothing.'));
      const started = Date.now();
      const turn = await patientApp.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Make stock again' } });
      const ms = Date.now() - started;
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.match(toolMessage(turn.body.messages).result.error, /timed out/);
      assert.equal((server.calls.never_answers ?? 0) - before, 2);
      assert.ok(ms < 60_000, `the turn took ${ms} ms`);
    } finally {
      await patientApp.stop();
    }
  });

  test('a question stops the clock: the user may take longer than callTimeout to answer', async () => {
    server.afterQuestionMs = 500;
    const id = await open();
    fake.script(reply.calls({ name: 'sluggish__ask_then_work', args: { dish: 'soup' } }), reply.text('Soup is on.'));
    const asked = await say(id, 'Cook soup', 60_000);
    const question = asked.body.pending.find((item: any) => item.kind === 'question');
    assert.ok(question, JSON.stringify(asked.body));
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // longer than the 2 s callTimeout
    const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
      body: { pendingId: question.id, decision: 'accept', args: { pot: 'big' } },
    });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal(toolMessage(decided.body.messages).result.text, 'Cooked soup in the big pot.');
  });

  test('Stop in the middle of a slow call: the transcript and the tool-call record say the same, that it may have completed', async () => {
    server.simmerMs = 6_000;
    const finishedBefore = server.finished;
    const callsBefore = server.calls.slow_simmer ?? 0;
    const id = await open();
    fake.script(reply.calls({ name: 'stockpot__slow_simmer', args: { minutes: 90 } }));
    const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Simmer the stock' } });
    for (const until = Date.now() + 30_000; (server.calls.slow_simmer ?? 0) === callsBefore;) {
      assert.ok(Date.now() < until, 'the server never got the call');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stopped = await app.call('POST', `/v1/conversations/${id}/stop`);
    assert.deepEqual(stopped.body, { stopped: true });
    const answered = await turn;
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.stopped, true);
    const said = toolMessage(answered.body.messages);
    assert.equal(said.result.status, 'stopped');
    assert.ok(said.result.error.includes(STOPPED_WORDS), said.result.error);

    // The server goes on and finishes: "it may have completed" is true.
    for (const until = Date.now() + 30_000; server.finished === finishedBefore;) {
      assert.ok(Date.now() < until, 'the server never finished');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The call's activity learns of the Stop on a heartbeat and records the call with the same words.
    let exported: any;
    for (const until = Date.now() + 45_000; ;) {
      exported = (await app.call('GET', `/v1/conversations/${id}/export`)).body;
      if (exported.toolCalls.some((call: any) => call.callId === said.callId)) break;
      assert.ok(Date.now() < until, `no tool-call record: ${JSON.stringify(exported.toolCalls)}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const record = exported.toolCalls.find((call: any) => call.callId === said.callId);
    assert.deepEqual(record.result, said.result);
    const inTranscript = toolMessage((await app.call('GET', `/v1/conversations/${id}`)).body.messages);
    assert.deepEqual(inTranscript.result, said.result);
    assert.deepEqual(toolMessage(exported.messages).result, said.result);
    const markdown = await app.call('GET', `/v1/conversations/${id}/export?format=markdown`);
    assert.ok(String(markdown.body).includes(STOPPED_WORDS));
  });

  test("an operator's terminate in the middle of a slow call: the call the server completes afterwards keeps its record", async () => {
    // longer than the activity's heartbeats take to learn the run is gone (every 3.3 s)
    server.simmerMs = 8_000;
    const finishedBefore = server.finished;
    const callsBefore = server.calls.slow_simmer ?? 0;
    const id = await open();
    fake.script(reply.calls({ name: 'stockpot__slow_simmer', args: { minutes: 45 } }));
    const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Simmer the broth' } });
    for (const until = Date.now() + 30_000; (server.calls.slow_simmer ?? 0) === callsBefore;) {
      assert.ok(Date.now() < until, 'the server never got the call');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await app.client.workflow.getHandle(`conversation-${id}`).terminate('an operator ended it');
    await turn;
    for (const until = Date.now() + 30_000; server.finished === finishedBefore;) {
      assert.ok(Date.now() < until, 'the server never finished');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // the activity learns on a heartbeat that its run is gone; the call goes on to its end and is recorded
    let exported: any;
    for (const until = Date.now() + 20_000; ;) {
      exported = (await app.call('GET', `/v1/conversations/${id}/export`)).body;
      if (exported.toolCalls?.length) break;
      assert.ok(Date.now() < until, `no tool-call record: ${JSON.stringify(exported.toolCalls)}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    assert.match(JSON.stringify(exported.toolCalls[0].result), /Simmered for 45 minutes/);
  });
});
