// One trace per turn, and the metrics that turns move: the app runs with tracing on (OTLP/HTTP JSON to an
// in-process receiver) and GET /metrics, against the scripted Gemini server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { initTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let receiver: OtlpReceiver;
let tracing: Tracing;
let fake: FakeGemini;
let app: TestApp;

before(async () => {
  receiver = await startOtlpReceiver();
  tracing = initTracing({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'brigade-test',
  });
  assert.equal(tracing.enabled, true);
  fake = await startFakeGemini({ apiKey: 'test-gemini-key' });
  app = await startTestApp({
    env: { GEMINI_API_KEY: 'test-gemini-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '10s', METRICS_ENABLED: 'true' },
  });
});
after(async () => {
  await app?.stop();
  await fake?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

const say = (id: string, text: string) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });

function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).match(/^\{([^}]*)\}/)?.[1] ?? '';
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (wanted.every(([key, value]) => found[key] === value)) total += Number(line.split(' ').at(-1));
  }
  return total;
}

describe('a turn with tracing and metrics on', () => {
  let conversationId: string;
  let trace: ReceivedSpan[];

  test('is one trace: API request, Update, model activity, model span, Gemini HTTP call, tool, PostgreSQL', async () => {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
    assert.equal(created.status, 201);
    conversationId = created.body.id;
    fake.script(
      reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }),
      reply.text('John Doe has three orders.', { usage: { promptTokenCount: 120, candidatesTokenCount: 8, totalTokenCount: 128 } }),
    );
    const answered = await say(conversationId, 'Who is john@gmail.com?');
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    await tracing.flush();

    const isTurnRequest = (span: ReceivedSpan) =>
      span.kind === 2 /* SERVER */ &&
      String(span.attributes['http.target'] ?? span.attributes['url.path'] ?? '').endsWith(`/${conversationId}/messages`);
    await receiver.waitFor((spans) => {
      const root = spans.find(isTurnRequest);
      return Boolean(
        root &&
        spans.some((s) => s.traceId === root.traceId && s.name.startsWith('chat ')) &&
        spans.some((s) => s.traceId === root.traceId && s.name === 'HandleUpdate:sendMessage'),
      );
    });
    const request = receiver.spans.find(isTurnRequest)!;
    trace = receiver.spans.filter((span) => span.traceId === request.traceId);
    const names = trace.map((span) => span.name);
    assert.equal(request.name, 'POST /v1/conversations/:id/messages');
    assert.equal(request.attributes['http.route'], '/v1/conversations/:id/messages');
    const has = (what: string, predicate: (span: ReceivedSpan) => boolean) => {
      const span = trace.find(predicate);
      assert.ok(span, `the trace has no ${what}; it has: ${names.join(', ')}`);
      return span;
    };

    has(
      'conversation attributes on an API span',
      (s) =>
        s.attributes['brigade.conversation_id'] === conversationId &&
        s.attributes['brigade.agent'] === 'support' &&
        s.attributes['brigade.user'] === 'alice',
    );
    has('Update call from the client', (s) => s.name === 'StartWorkflowUpdate:sendMessage');
    const handler = has('Update handler in the workflow', (s) => s.name === 'HandleUpdate:sendMessage');
    const activity = has('model activity', (s) => s.name === 'RunActivity:modelStep');
    assert.equal(activity.parentSpanId, handler.spanId, 'the activity runs under the Update that scheduled it');
    assert.equal(activity.attributes['brigade.conversation_id'], conversationId);
    assert.equal(activity.attributes['brigade.agent'], 'support');
    const model = has('model span', (s) => s.name.startsWith('chat '));
    assert.equal(model.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(model.attributes['gen_ai.request.model'], 'gemini-2.5-flash');
    assert.equal(typeof model.attributes['gen_ai.usage.input_tokens'], 'number');
    assert.equal(typeof model.attributes['gen_ai.usage.output_tokens'], 'number');
    assert.equal(model.attributes['brigade.agent'], 'support');
    assert.equal(model.attributes['gen_ai.input.messages'], undefined, 'prompts stay out of spans by default');
    const port = new URL(fake.baseUrl).port;
    has(
      'Gemini HTTP call',
      (s) => s.kind === 3 /* CLIENT */ && String(s.attributes['url.full'] ?? s.attributes['http.url'] ?? '').includes(`:${port}/`),
    );
    has('tool span', (s) => s.name === 'execute_tool get_user_info' && s.attributes['gen_ai.tool.name'] === 'get_user_info');
    has('PostgreSQL query', (s) => s.attributes['db.system'] === 'postgresql');
    assert.ok(trace.every((span) => span.service === 'brigade-test'));
    assert.equal(receiver.rejected, 0);
  });

  test('GET /metrics shows the turn, its tokens and its tool call', async () => {
    const response = await fetch(`${app.baseUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    const text = await response.text();
    assert.ok(sample(text, 'brigade_turns_total', { agent: 'support', kind: 'message', outcome: 'ok' }) >= 1, text);
    assert.ok(sample(text, 'brigade_turn_duration_seconds_count', { agent: 'support', kind: 'message' }) >= 1);
    assert.ok(sample(text, 'brigade_model_tokens_total', { agent: 'support', type: 'input' }) >= 120);
    assert.ok(sample(text, 'brigade_model_tokens_total', { agent: 'support', type: 'output' }) >= 8);
    assert.ok(sample(text, 'brigade_tool_calls_total', { tool: 'get_user_info' }) >= 1);

    // an approval: a pending item waits, then a decision closes it
    fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), reply.text('Order 13579 is cancelled.'));
    const asked = await say(conversationId, 'Cancel order 13579');
    assert.equal(asked.body.pending.length, 1);
    const waiting = await (await fetch(`${app.baseUrl}/metrics`)).text();
    assert.equal(sample(waiting, 'brigade_turns_total', { agent: 'support', kind: 'message', outcome: 'waiting' }), 1);
    assert.equal(sample(waiting, 'brigade_pending_waiting', { kind: asked.body.pending[0].kind }), 1);
    const decided = await app.call('POST', `/v1/conversations/${conversationId}/decisions`, {
      body: { pendingId: asked.body.pending[0].id, decision: 'approve' },
    });
    assert.equal(decided.status, 200);
    const after = await (await fetch(`${app.baseUrl}/metrics`)).text();
    assert.equal(sample(after, 'brigade_pending_waiting', { kind: asked.body.pending[0].kind }), 0);
    assert.equal(sample(after, 'brigade_decisions_total', { decision: 'approve', closed_as: 'decided' }), 1);
    assert.equal(sample(after, 'brigade_turns_total', { agent: 'support', kind: 'decision', outcome: 'ok' }), 1);
    assert.ok(sample(after, 'brigade_tool_calls_total', { tool: 'cancel_order' }) >= 1);
  });
});

describe('a traced run', () => {
  test('replays from its own history (the workflow interceptors add no commands)', async () => {
    const { Worker } = await import('@temporalio/worker');
    const { workflowBundlePath } = await import('../support/harness.ts');
    const [conversation] = (await app.call('GET', '/v1/conversations')).body.conversations;
    const handle = app.client.workflow.getHandle(conversation.workflowId);
    const history = await handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    assert.ok(started?.header?.fields?.['_tracer-data'], 'the run was started with a trace context');
    await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, conversation.workflowId);
  });
});
