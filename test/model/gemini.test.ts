// The real @google/genai client, through createGeminiModel, against the scripted local Gemini.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { toolDeclarations } from '../../src/model/declarations.ts';
import { createGeminiModel } from '../../src/model/gemini.ts';
import { ModelCallError } from '../../src/model/types.ts';
import type { ModelRequest } from '../../src/model/types.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';
import { supportTools } from '../../src/agents/support/tools.ts';
import { endsWithToolResults, reply, startFakeGemini } from '../support/fake-gemini.ts';
import type { FakeGemini } from '../support/fake-gemini.ts';

const API_KEY = 'test-key-AIzaSyD-not-a-real-key-0123456789';
const MODEL = 'gemini-2.5-flash';

let fake: FakeGemini;
before(async () => {
  fake = await startFakeGemini();
});
after(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const model = (options: { timeoutMs?: number; model?: string } = {}) =>
  createGeminiModel({ apiKey: API_KEY, baseUrl: fake.baseUrl, model: options.model ?? MODEL, timeoutMs: options.timeoutMs ?? 5_000 });

const user = (text: string): ChatMessage => ({ id: `u-${text.length}`, role: 'user', text });

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are a test.',
  messages: [user('hello')],
  tools: [],
  ...overrides,
});

async function expectModelError(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => assert.fail('expected the call to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ModelCallError, `expected a ModelCallError, got ${String(error)}`);
  assert.ok(!error.message.includes(API_KEY), 'the API key must not appear in the message');
  assert.ok(!String(error.stack).includes(API_KEY), 'the API key must not appear in the stack');
  return error;
}

describe('createGeminiModel', () => {
  test('assembles streamed text and delivers the deltas in order', async () => {
    fake.script(reply.text(['Hello', ', ', 'world', '!']));
    const deltas: string[] = [];
    const result = await model().generate(request({ onText: (delta) => deltas.push(delta) }));
    assert.deepEqual(deltas, ['Hello', ', ', 'world', '!']);
    assert.equal(result.text, 'Hello, world!');
    assert.deepEqual(result.toolCalls, []);
    assert.equal(result.model, MODEL);
    assert.equal(fake.requests.length, 1);
    const [sent] = fake.requests;
    assert.equal(sent!.path, `/v1beta/models/${MODEL}:streamGenerateContent`);
    assert.equal(sent!.query.alt, 'sse');
    assert.equal(sent!.apiKey, API_KEY);
  });

  test('parses function calls with their arguments', async () => {
    fake.script(
      reply.callsWithText(
        'Let me check.',
        { name: 'get_order_by_id', args: { order_id: '24601' } },
        { name: 'get_customer_orders', args: { customer_id: '1213210' }, id: 'call-2' },
      ),
    );
    const result = await model().generate(request({ tools: toolDeclarations(supportTools) }));
    assert.equal(result.text, 'Let me check.');
    assert.deepEqual(result.toolCalls, [
      { name: 'get_order_by_id', args: { order_id: '24601' } },
      { name: 'get_customer_orders', args: { customer_id: '1213210' } },
    ]);
  });

  test('sends the system prompt, the declarations and the transcript with calls and results', async () => {
    fake.script(reply.text('Order 24601 has shipped; customer 1213210 has 2 orders.'));
    const messages: ChatMessage[] = [
      user('status of order 24601 and orders for 1213210'),
      {
        id: 'a1',
        role: 'assistant',
        text: 'Looking both up.',
        toolCalls: [
          { id: 'call-1', name: 'get_order_by_id', args: { order_id: '24601' } },
          { id: 'call-2', name: 'get_customer_orders', args: { customer_id: '1213210' } },
        ],
      },
      {
        id: 'call-1',
        role: 'tool',
        text: 'get_order_by_id done',
        callId: 'call-1',
        tool: 'get_order_by_id',
        args: { order_id: '24601' },
        result: { id: '24601', status: 'Shipped' },
      },
      {
        id: 'call-2',
        role: 'tool',
        text: 'get_customer_orders done',
        callId: 'call-2',
        tool: 'get_customer_orders',
        args: { customer_id: '1213210' },
        result: [{ id: '24601' }, { id: '13579' }],
      },
    ];
    const result = await model().generate(request({ system: 'Be a support agent.', messages, tools: toolDeclarations(supportTools) }));
    assert.equal(result.text, 'Order 24601 has shipped; customer 1213210 has 2 orders.');

    const body = fake.requests[0]!.body;
    assert.deepEqual(body.systemInstruction?.parts, [{ text: 'Be a support agent.' }]);
    assert.deepEqual(body.contents, [
      { role: 'user', parts: [{ text: 'status of order 24601 and orders for 1213210' }] },
      {
        role: 'model',
        parts: [
          { text: 'Looking both up.' },
          { functionCall: { id: 'call-1', name: 'get_order_by_id', args: { order_id: '24601' } } },
          { functionCall: { id: 'call-2', name: 'get_customer_orders', args: { customer_id: '1213210' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call-1', name: 'get_order_by_id', response: { id: '24601', status: 'Shipped' } } },
          { functionResponse: { id: 'call-2', name: 'get_customer_orders', response: { result: [{ id: '24601' }, { id: '13579' }] } } },
        ],
      },
    ]);

    const declarations = body.tools?.[0]?.functionDeclarations ?? [];
    assert.deepEqual(
      declarations.map((declaration) => declaration.name),
      supportTools.map((tool) => tool.name),
    );
    const cancel = declarations.find((declaration) => declaration.name === 'cancel_order')!;
    assert.equal(cancel.parameters, undefined, 'JSON Schema goes in parametersJsonSchema, not parameters');
    assert.deepEqual(cancel.parametersJsonSchema, {
      type: 'object',
      properties: { order_id: { type: 'string', pattern: '^\\d{5}$', description: 'The 5-digit order ID to cancel' } },
      required: ['order_id'],
    });
    const lookup = declarations.find((declaration) => declaration.name === 'get_user')!;
    assert.deepEqual(lookup.parametersJsonSchema.properties.key.enum, ['email', 'phone', 'username']);
    // the SDK's own switches stay on our side of the wire
    assert.equal(body.automaticFunctionCalling, undefined);
    assert.equal(JSON.stringify(body).includes('automaticContinuation'), false);
  });

  test('sends the same bytes for the same context and transcript, whatever order their keys were made in', async () => {
    // a tool's result fresh from the tool, and the same result read back from PostgreSQL's jsonb (shorter keys first)
    const fresh: ChatMessage[] = [
      user('where?'),
      {
        id: 'a1',
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 'c1', name: 'get_order_by_id', args: { order_id: '24601', verbose: true } }],
      },
      {
        id: 't1',
        role: 'tool',
        text: '',
        callId: 'c1',
        tool: 'get_order_by_id',
        result: { id: '24601', customer_id: '1', product: 'Headphones' },
      },
    ];
    const stored: ChatMessage[] = [
      fresh[0]!,
      {
        id: 'a1',
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 'c1', name: 'get_order_by_id', args: { verbose: true, order_id: '24601' } }],
      },
      {
        id: 't1',
        role: 'tool',
        text: '',
        callId: 'c1',
        tool: 'get_order_by_id',
        result: { id: '24601', product: 'Headphones', customer_id: '1' },
      },
    ];
    fake.script(reply.text('one'), reply.text('two'));
    await model().generate(request({ messages: fresh, context: { recipe: { title: 'Soup', servings: 2 }, defaults: {} } }));
    await model().generate(request({ messages: stored, context: { defaults: {}, recipe: { servings: 2, title: 'Soup' } } }));
    const [first, second] = fake.requests.map((sent) => JSON.stringify([sent.body.systemInstruction, sent.body.tools, sent.body.contents]));
    assert.equal(second, first);
  });

  test('replays function calls to Gemini 3 with the documented placeholder signature', async () => {
    fake.script(reply.text('ok'));
    const messages: ChatMessage[] = [
      user('cancel 13579'),
      { id: 'a', role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'cancel_order', args: { order_id: '13579' } }] },
      { id: 'c1', role: 'tool', text: 'done', callId: 'c1', tool: 'cancel_order', result: { status: 'Cancelled' } },
    ];
    await model({ model: 'gemini-3-flash-preview' }).generate(request({ messages }));
    const modelTurn = fake.requests[0]!.body.contents![1]!;
    assert.deepEqual(modelTurn.parts, [
      {
        functionCall: { id: 'c1', name: 'cancel_order', args: { order_id: '13579' } },
        thoughtSignature: 'skip_thought_signature_validator',
      },
    ]);
  });

  test('reads usage from the last chunk', async () => {
    fake.script(reply.text('one two three', { pieces: 3, usage: { promptTokenCount: 42, candidatesTokenCount: 7, totalTokenCount: 55 } }));
    const result = await model().generate(request());
    assert.deepEqual(result.usage, { inputTokens: 42, outputTokens: 7, totalTokens: 55 });
  });

  for (const status of [429, 500, 503]) {
    test(`HTTP ${status} is retryable, and the SDK made exactly one request`, async () => {
      fake.script(reply.error(status, 'try later'), reply.text('should not be reached'));
      const error = await expectModelError(model().generate(request()));
      assert.equal(error.retryable, true);
      assert.equal(error.status, status);
      assert.match(error.message, new RegExp(`${status}`));
      assert.match(error.message, /try later/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(fake.requests.length, 1, 'no retries inside the SDK');
      assert.equal(fake.pendingReplies, 1);
    });
  }

  for (const status of [400, 401, 403, 404]) {
    test(`HTTP ${status} is not retryable`, async () => {
      fake.script(reply.error(status, 'nope'));
      const error = await expectModelError(model().generate(request()));
      assert.equal(error.retryable, false);
      assert.equal(error.status, status);
      assert.equal(fake.requests.length, 1);
    });
  }

  test('a rejected API key is not retryable and the key stays out of the error', async () => {
    const strict = await startFakeGemini({ apiKey: 'the-right-key' });
    try {
      const wrong = createGeminiModel({ apiKey: API_KEY, baseUrl: strict.baseUrl, model: MODEL, timeoutMs: 5_000 });
      const error = await expectModelError(wrong.generate(request()));
      assert.equal(error.retryable, false);
      assert.equal(error.status, 400);
      assert.match(error.message, /API key not valid/);
    } finally {
      await strict.close();
    }
  });

  test('an error body that echoes the key is redacted', async () => {
    fake.script(reply.error(403, `key ${API_KEY} is not allowed`));
    const error = await expectModelError(model().generate(request()));
    assert.match(error.message, /\[redacted\]/);
    assert.equal(error.cause, undefined, 'a cause that holds the key is dropped');
  });

  test('connection refused is retryable', async () => {
    const port = await freePort();
    const offline = createGeminiModel({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${port}`, model: MODEL, timeoutMs: 5_000 });
    const error = await expectModelError(offline.generate(request()));
    assert.equal(error.retryable, true);
    assert.equal(error.status, undefined);
    assert.match(error.message, /ECONNREFUSED/);
  });

  test('a dropped connection is retryable', async () => {
    fake.script(reply.drop());
    const error = await expectModelError(model().generate(request()));
    assert.equal(error.retryable, true);
    assert.equal(fake.requests.length, 1);
  });

  test('a reply slower than the whole-request timeout is not retried (it would wait as long again), in one wording', async () => {
    const held = reply.hold(reply.text('too late'));
    fake.script(held);
    const error = await expectModelError(model({ timeoutMs: 200 }).generate(request()));
    assert.equal(error.retryable, false);
    assert.equal(error.message, 'The model did not answer within 200 ms');
    held.release();
  });

  test('a cancelled call rejects with the signal reason', async () => {
    const held = reply.hold(reply.text('too late'));
    fake.script(held);
    const controller = new AbortController();
    const call = model().generate(request({ signal: controller.signal }));
    await held.reached;
    const reason = new Error('activity cancelled');
    controller.abort(reason);
    await assert.rejects(call, (error) => error === reason);
    held.release();
  });

  test('no candidates, a blocked prompt and a safety stop are not retryable', async () => {
    fake.script(
      reply.chunks({ usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }),
      reply.chunks({ promptFeedback: { blockReason: 'SAFETY' } }),
      reply.chunks({ candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index: 0 }] }),
      reply.chunks({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { args: {} } }] }, index: 0 }] }),
    );
    const none = await expectModelError(model().generate(request()));
    assert.equal(none.retryable, false);
    assert.match(none.message, /no candidates/);
    const blocked = await expectModelError(model().generate(request()));
    assert.equal(blocked.retryable, false);
    assert.match(blocked.message, /blocked the prompt \(SAFETY\)/);
    const stopped = await expectModelError(model().generate(request()));
    assert.equal(stopped.retryable, false);
    assert.match(stopped.message, /SAFETY/);
    const nameless = await expectModelError(model().generate(request()));
    assert.equal(nameless.retryable, false);
    assert.match(nameless.message, /without a name/);
  });

  test('an error inside the stream keeps its status', async () => {
    fake.script(reply.chunks({ error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }));
    const error = await expectModelError(model().generate(request()));
    assert.equal(error.status, 503);
    assert.equal(error.retryable, true);
  });

  test('an unscripted request gets a clear 500', async () => {
    const error = await expectModelError(model().generate(request()));
    assert.equal(error.status, 500);
    assert.match(error.message, /no reply scripted/);
  });

  test('scriptFn answers from the request: a call after user text, text after results', async () => {
    fake.scriptFn((sent) =>
      endsWithToolResults(sent) ? reply.text('Cancelled.') : reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }),
    );
    const first = await model().generate(request({ messages: [user('cancel 13579')] }));
    assert.deepEqual(first.toolCalls, [{ name: 'cancel_order', args: { order_id: '13579' } }]);
    const second = await model().generate(
      request({
        messages: [
          user('cancel 13579'),
          { id: 'a', role: 'assistant', text: '', toolCalls: [{ id: 'c', name: 'cancel_order', args: { order_id: '13579' } }] },
          { id: 'c', role: 'tool', text: 'done', callId: 'c', tool: 'cancel_order', result: { status: 'Cancelled' } },
        ],
      }),
    );
    assert.equal(second.text, 'Cancelled.');
    assert.deepEqual(second.toolCalls, []);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('explicit context caching (GEMINI_CONTEXT_CACHE=explicit)', () => {
  const cached = (minTokens = 100) =>
    createGeminiModel({
      apiKey: API_KEY,
      baseUrl: fake.baseUrl,
      model: MODEL,
      timeoutMs: 5_000,
      contextCache: { mode: 'explicit', ttlMs: 300_000, minTokens },
    });
  const withTools = (text: string) =>
    request({ system: 'You are a support agent. '.repeat(40), tools: toolDeclarations(supportTools), messages: [user(text)] });

  test('stores the prefix once and names it in each call instead of sending it', async () => {
    const chat = cached();
    fake.script(reply.text('one'), reply.text('two'));
    const first = await chat.generate(withTools('first'));
    await chat.generate(withTools('second, longer'));
    assert.equal(fake.caches.length, 1, 'one cache for the repeated prefix');
    assert.match(JSON.stringify(fake.caches[0]!.body.systemInstruction), /You are a support agent/);
    assert.deepEqual(
      fake.caches[0]!.body.tools?.[0]?.functionDeclarations?.map((declaration) => declaration.name),
      supportTools.map((tool) => tool.name),
    );
    assert.match(String(fake.caches[0]!.body.ttl), /^300(\.0+)?s$/);
    for (const sent of fake.requests) {
      assert.equal(sent.body.cachedContent, fake.caches[0]!.name);
      assert.equal(sent.body.systemInstruction, undefined, 'the cached prefix is not sent again');
      assert.equal(sent.body.tools, undefined);
    }
    assert.ok((first.usage.cachedInputTokens ?? 0) > 0, 'the cached part is reported');

    // a prefix below the minimum is sent as it is
    fake.script(reply.text('three'));
    await cached(1_000_000).generate(withTools('short'));
    assert.equal(fake.cacheAttempts, 1);
    assert.equal(fake.requests.at(-1)!.body.cachedContent, undefined);
    assert.ok(fake.requests.at(-1)!.body.systemInstruction);
  });

  test('a refused caches.create: the call goes on without a cache, and the model is not asked again for a while', async () => {
    const chat = cached();
    fake.refuseCaches = true;
    fake.script(reply.text('one'), reply.text('two'));
    assert.equal((await chat.generate(withTools('first'))).text, 'one');
    fake.refuseCaches = false;
    assert.equal((await chat.generate(withTools('second'))).text, 'two');
    assert.equal(fake.cacheAttempts, 1, 'asked once; the refusal is remembered');
    assert.equal(fake.caches.length, 0);
    for (const sent of fake.requests) {
      assert.equal(sent.body.cachedContent, undefined);
      assert.ok(sent.body.systemInstruction && sent.body.tools, 'the prefix is sent itself');
    }
  });

  test('a call refused for the cache it names goes on once without it, and later calls send the prefix', async () => {
    const chat = cached();
    fake.script(reply.text('one'));
    await chat.generate(withTools('first'));
    fake.refuseCachedContent = true;
    fake.script(reply.text('two'), reply.text('three'));
    assert.equal((await chat.generate(withTools('second'))).text, 'two');
    await chat.generate(withTools('third'));
    const [, refused, retried, later] = fake.requests;
    assert.equal(refused!.body.cachedContent, fake.caches[0]!.name);
    assert.equal(retried!.body.cachedContent, undefined);
    assert.ok(retried!.body.systemInstruction && retried!.body.tools);
    assert.equal(later!.body.cachedContent, undefined, 'the refusal is remembered');
    assert.equal(fake.requests.length, 4);
  });
});
