// The official `openai` and `@anthropic-ai/sdk` clients, through createOpenAiModel and createAnthropicModel
// (and their task models), against the OpenAI-wire and Anthropic-wire servers the tests script: streaming,
// tool calls, structured output, usage, Stop closing the stream, errors sorted into retryable or not, and
// what a provider cannot do going to the named fallback (Gemini) or said in words.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { supportTools } from '../../src/agents/support/tools.ts';
import { createAnthropicModel, createAnthropicTaskModel } from '../../src/model/anthropic.ts';
import { toolDeclarations } from '../../src/model/declarations.ts';
import { CONTEXT_MARKER } from '../../src/model/gemini.ts';
import { createOpenAiModel, createOpenAiTaskModel } from '../../src/model/openai.ts';
import { costOf, DEFAULT_MODEL_PRICES, parseModelPrices } from '../../src/model/prices.ts';
import { chatModelName, selectModel, selectProvider, selectTaskModel } from '../../src/model/select.ts';
import { type ChatModel, ModelCallError, type ModelRequest } from '../../src/model/types.ts';
import type { ImageRequest, TaskRequest } from '../../src/model/task-model.ts';
import { loadConfig } from '../../src/config.ts';
import type { ChatMessage } from '../../src/shared/messages.ts';
import { startFakeAnthropic } from '../support/fake-anthropic.ts';
import { reply as geminiReply, startFakeGemini, type FakeGemini } from '../support/fake-gemini.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { type FakeWire, wireReply as reply } from '../support/fake-wire.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';

const API_KEY = 'sk-test-not-a-real-key-0123456789abcdef';
// who pays, where the task interface asks for it (the usage ledger's charge)
const task = (fields: Omit<TaskRequest, 'charge'>) =>
  ({ charge: { userId: 'test', key: `task-${fields.task}` }, ...fields }) as TaskRequest;
const image = (fields: Omit<ImageRequest, 'charge'>) =>
  ({ charge: { userId: 'test', key: `image-${fields.task}` }, ...fields }) as ImageRequest;

interface Wire {
  name: 'OpenAI' | 'Anthropic';
  model: string;
  start(): Promise<FakeWire>;
  chat(fake: FakeWire, timeoutMs?: number): ChatModel;
  task(fake: FakeWire): ReturnType<typeof createOpenAiTaskModel>;
  /** the system text, the tool names and the transcript's last entry as the wire carries them */
  system(body: Record<string, any>): string;
  toolNames(body: Record<string, any>): string[];
  toolResults(body: Record<string, any>): { id: string; content: string }[];
  env(fake: FakeWire): Record<string, string>;
}

const WIRES: Wire[] = [
  {
    name: 'OpenAI',
    model: 'gpt-4.1-mini',
    start: () => startFakeOpenAi({ apiKey: API_KEY }),
    chat: (fake, timeoutMs = 5_000) => createOpenAiModel({ apiKey: API_KEY, baseUrl: fake.baseUrl, model: 'gpt-4.1-mini', timeoutMs }),
    task: (fake) => createOpenAiTaskModel({ apiKey: API_KEY, baseUrl: fake.baseUrl, model: 'gpt-4.1-mini', timeoutMs: 5_000 }),
    system: (body) =>
      body.messages
        .filter((m: any) => m.role === 'system')
        .map((m: any) => m.content)
        .join('\n'),
    toolNames: (body) => (body.tools ?? []).map((t: any) => t.function.name),
    toolResults: (body) =>
      body.messages.filter((m: any) => m.role === 'tool').map((m: any) => ({ id: m.tool_call_id, content: m.content })),
    env: (fake) => ({ OPENAI_API_KEY: API_KEY, OPENAI_BASE_URL: fake.baseUrl, OPENAI_MODEL: 'gpt-4.1-mini' }),
  },
  {
    name: 'Anthropic',
    model: 'claude-haiku-4-5',
    start: () => startFakeAnthropic({ apiKey: API_KEY }),
    chat: (fake, timeoutMs = 5_000) =>
      createAnthropicModel({ apiKey: API_KEY, baseUrl: fake.baseUrl, model: 'claude-haiku-4-5', timeoutMs }),
    task: (fake) => createAnthropicTaskModel({ apiKey: API_KEY, baseUrl: fake.baseUrl, model: 'claude-haiku-4-5', timeoutMs: 5_000 }),
    system: (body) => body.system ?? '',
    toolNames: (body) => (body.tools ?? []).map((t: any) => t.name),
    toolResults: (body) =>
      body.messages
        .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
        .filter((b: any) => b.type === 'tool_result')
        .map((b: any) => ({ id: b.tool_use_id, content: b.content })),
    env: (fake) => ({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: fake.baseUrl, ANTHROPIC_MODEL: 'claude-haiku-4-5' }),
  },
];

const user = (text: string): ChatMessage => ({ id: `u-${text.length}`, role: 'user', text });
const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are a test.',
  messages: [user('hello')],
  tools: [],
  ...overrides,
});

async function modelError(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => assert.fail('expected the call to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ModelCallError, `expected a ModelCallError, got ${String(error)}`);
  assert.ok(!error.message.includes(API_KEY) && !String(error.stack).includes(API_KEY), 'the key stays out of the error');
  return error;
}

for (const wire of WIRES) {
  describe(`${wire.name} over its official SDK`, () => {
    let fake: FakeWire;
    before(async () => {
      fake = await wire.start();
    });
    after(() => fake.close());
    beforeEach(() => fake.reset());

    test('streams text in order, with usage the price table turns into money', async () => {
      fake.script(reply.text(['Hello', ', ', 'world', '!'], { usage: { input: 1200, output: 300 } }));
      const deltas: string[] = [];
      const usages: number[] = [];
      const result = await wire.chat(fake).generate(request({ onText: (d) => deltas.push(d), onUsage: (u) => usages.push(u.totalTokens) }));
      assert.deepEqual(deltas, ['Hello', ', ', 'world', '!']);
      assert.equal(result.text, 'Hello, world!');
      assert.deepEqual(result.usage, { inputTokens: 1200, outputTokens: 300, totalTokens: 1500 });
      assert.equal(usages.at(-1), 1500, 'the stream reported its usage as it came');
      assert.equal(result.model, wire.model);
      const price = DEFAULT_MODEL_PRICES[wire.model]!;
      assert.deepEqual(costOf(DEFAULT_MODEL_PRICES, result.model, result.usage), {
        amount: Math.round(((1200 * price.input + 300 * price.output) / 1e6) * 1e6) / 1e6,
        currency: 'USD',
      });
      const sent = fake.requests[0]!;
      assert.equal(sent.apiKey, API_KEY);
      assert.equal(sent.stream, true);
      if (wire.name === 'OpenAI') assert.deepEqual(sent.body.stream_options, { include_usage: true }, 'streaming asks for usage');
    });

    test('reports the cached part of the input, streamed and in a one-shot task, and prices it at its own rate', async () => {
      fake.script(reply.text('Cached.', { usage: { input: 5000, output: 20, cached: 4096 } }));
      const seen: (number | undefined)[] = [];
      const result = await wire.chat(fake).generate(request({ onUsage: (u) => seen.push(u.cachedInputTokens) }));
      assert.deepEqual(result.usage, { inputTokens: 5000, outputTokens: 20, totalTokens: 5020, cachedInputTokens: 4096 });
      assert.equal(seen.at(-1), 4096, 'the stream reported the cached part as it came');
      const prices = parseModelPrices(JSON.stringify({ [wire.model]: { input: 1, cachedInput: 0.1, output: 0 } }));
      // 904 uncached at 1 and 4,096 cached at 0.1 per million, in micro-units
      assert.equal(costOf(prices, result.model, result.usage)!.amount, 0.001314);

      fake.script(reply.text('{}', { usage: { input: 3000, output: 5, cached: 2048 } }));
      const answered = await wire.task(fake).complete(task({ task: 'cached', prompt: 'hi' }));
      assert.equal(answered.usage.cachedInputTokens, 2048);
      assert.equal(answered.usage.inputTokens, 3000);
    });

    test('sends the system prompt, the context apart from user text, the tools, and the transcript with paired calls and results', async () => {
      fake.script(
        reply.calls(
          { name: 'get_order_by_id', args: { order_id: '24601' } },
          { name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } },
        ),
      );
      const messages: ChatMessage[] = [
        user('cancel 13579'),
        {
          id: 'a1',
          role: 'assistant',
          text: 'Checking.',
          toolCalls: [
            { id: 'step.1', name: 'cancel_order', args: { order_id: '13579' } },
            { id: 'step.2', name: 'get_order_by_id', args: { order_id: '13579' } },
          ],
        },
        { id: 't1', role: 'tool', text: '', callId: 'step.1', tool: 'cancel_order', result: { status: 'Cancelled' } },
        { id: 'a2', role: 'assistant', text: 'Half a reply', stopped: true },
        user('where is 24601?'),
      ];
      const result = await wire
        .chat(fake)
        .generate(request({ messages, tools: toolDeclarations(supportTools), context: { recipeVersion: 3 } }));
      assert.deepEqual(result.toolCalls, [
        { name: 'get_order_by_id', args: { order_id: '24601' } },
        { name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } },
      ]);
      const body = fake.requests[0]!.body;
      assert.match(wire.system(body), /^You are a test\./);
      assert.match(wire.system(body), new RegExp(`${CONTEXT_MARKER.replace(/[()]/g, '\\$&')}\\n\\{"recipeVersion":3\\}`));
      assert.deepEqual(
        wire.toolNames(body).sort(),
        toolDeclarations(supportTools)
          .map((d) => d.name)
          .sort(),
      );
      const results = wire.toolResults(body);
      // the runtime's call ids (`<step>.<n>`) as each wire allows them: Anthropic takes letters, digits, _ and - only
      const sentId = (id: string) => (wire.name === 'Anthropic' ? id.replace('.', '_') : id);
      assert.deepEqual(results[0], { id: sentId('step.1'), content: '{"status":"Cancelled"}' });
      assert.equal(results[1]!.id, sentId('step.2'), 'a call left without a result gets one in words');
      if (wire.name === 'Anthropic') assert.match(JSON.stringify(body.messages), /"type":"tool_use","id":"step_1"/);
      assert.match(results[1]!.content, /was not run/);
      assert.match(JSON.stringify(body.messages), /Half a reply\\n\\n\[The user pressed Stop here/);
    });

    test('structured output: a JSON schema the reply must fit', async () => {
      const schema = { type: 'object', properties: { assistant_message: { type: 'string' } }, required: ['assistant_message'] };
      if (wire.name === 'OpenAI') fake.script(reply.text('{"assistant_message":"Hi"}'));
      else fake.script(reply.calls({ name: 'structured_answer', args: { assistant_message: 'Hi' } }));
      const result = await wire.chat(fake).generate(request({ output: { name: 'sous', schema } }));
      assert.deepEqual(JSON.parse(result.text), { assistant_message: 'Hi' });
      assert.deepEqual(result.toolCalls, []);
      const body = fake.requests[0]!.body;
      if (wire.name === 'OpenAI')
        assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'sous', schema, strict: false } });
      else {
        assert.deepEqual(body.tool_choice, { type: 'tool', name: 'structured_answer' });
        assert.deepEqual(body.tools[0].input_schema, schema);
      }
    });

    test('Stop: aborting the signal closes the stream mid-reply and rejects with the signal reason', async () => {
      const held = reply.hold(reply.text('never seen'));
      fake.script(held);
      const controller = new AbortController();
      const call = wire.chat(fake).generate(request({ signal: controller.signal }));
      const reached = await held.reached;
      const reason = new Error('stopped by the user');
      controller.abort(reason);
      await assert.rejects(call, (error) => error === reason);
      assert.equal(await reached.ended, 'closed', 'the HTTP exchange was closed, not left to finish');
    });

    for (const status of [429, 500, 503, ...(wire.name === 'Anthropic' ? [529] : [])]) {
      test(`HTTP ${status} is retryable, after exactly one request (the SDK retries nothing)`, async () => {
        fake.script(reply.error(status, 'busy'));
        const error = await modelError(wire.chat(fake).generate(request()));
        assert.equal(error.retryable, true);
        assert.equal(error.status, status);
        assert.equal(fake.requests.length, 1);
      });
    }
    for (const status of [400, 401, 403, 404]) {
      test(`HTTP ${status} is not retryable`, async () => {
        fake.script(reply.error(status, `refused with ${API_KEY}`));
        const error = await modelError(wire.chat(fake).generate(request()));
        assert.equal(error.retryable, false);
        assert.match(error.message, new RegExp(`${wire.name} API error ${status}`));
      });
    }
    test('a wrong key is not retryable and stays out of the error', async () => {
      const bad =
        wire.name === 'OpenAI'
          ? createOpenAiModel({ apiKey: 'sk-wrong-key-0123456789', baseUrl: fake.baseUrl, model: wire.model })
          : createAnthropicModel({ apiKey: 'sk-wrong-key-0123456789', baseUrl: fake.baseUrl, model: wire.model });
      const error = await modelError(bad.generate(request()));
      assert.equal(error.status, 401);
      assert.equal(error.retryable, false);
    });
    test('a dropped connection is retryable; a timeout is not (the same request would wait as long again)', async () => {
      fake.script(reply.drop());
      assert.equal((await modelError(wire.chat(fake).generate(request()))).retryable, true);
      fake.script(reply.delay(1_000, reply.text('late')));
      const late = await modelError(wire.chat(fake, 200).generate(request()));
      assert.equal(late.retryable, false);
      assert.equal(late.message, 'The model did not answer within 200 ms');
    });
    test('an error event inside the stream: overloaded is retryable, a bad request is not', async () => {
      fake.script(reply.streamError(wire.name === 'OpenAI' ? 'server_error' : 'overloaded_error', 'Overloaded'));
      assert.equal((await modelError(wire.chat(fake).generate(request()))).retryable, true);
      fake.script(reply.streamError('invalid_request_error', 'bad'));
      assert.equal((await modelError(wire.chat(fake).generate(request()))).retryable, false);
    });
    test('a reply cut at the output limit with nothing in it is not retryable', async () => {
      fake.script(reply.text([], { finish: wire.name === 'OpenAI' ? 'length' : 'max_tokens' }));
      const error = await modelError(wire.chat(fake).generate(request()));
      assert.equal(error.retryable, false);
      assert.match(error.message, /ran out of output tokens/);
    });

    test("another server's dialect: calls sent whole, without the deltas OpenAI and Anthropic send", async () => {
      if (wire.name === 'OpenAI') {
        // as some compatible servers send them: no index, each call whole with its own id, arguments as an object
        const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
          data: {
            id: 'x',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'llama3.2',
            choices: [{ index: 0, delta, finish_reason: finish }],
          },
        });
        fake.script(
          reply.events(
            chunk({
              role: 'assistant',
              tool_calls: [{ id: 'a', type: 'function', function: { name: 'get_order_by_id', arguments: { order_id: '24601' } } }],
            }),
            chunk({
              tool_calls: [
                { id: 'b', type: 'function', function: { name: 'get_user_info', arguments: '{"key":"email","value":"john@gmail.com"}' } },
              ],
            }),
            chunk({}, 'tool_calls'),
          ),
        );
      } else {
        fake.script(
          reply.events(
            {
              event: 'message_start',
              data: {
                type: 'message_start',
                message: {
                  id: 'm',
                  type: 'message',
                  role: 'assistant',
                  model: 'claude-haiku-4-5',
                  content: [],
                  stop_reason: null,
                  usage: { input_tokens: 10, output_tokens: 1 },
                },
              },
            },
            {
              event: 'content_block_start',
              data: {
                type: 'content_block_start',
                index: 0,
                content_block: { type: 'tool_use', id: 'a', name: 'get_order_by_id', input: { order_id: '24601' } },
              },
            },
            { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
            {
              event: 'content_block_start',
              data: {
                type: 'content_block_start',
                index: 1,
                content_block: { type: 'tool_use', id: 'b', name: 'get_user_info', input: { key: 'email', value: 'john@gmail.com' } },
              },
            },
            { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
            { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } } },
            { event: 'message_stop', data: { type: 'message_stop' } },
          ),
        );
      }
      const result = await wire.chat(fake).generate(request({ tools: toolDeclarations(supportTools) }));
      assert.deepEqual(result.toolCalls, [
        { name: 'get_order_by_id', args: { order_id: '24601' } },
        { name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } },
      ]);
    });

    test('the task model: a structured answer with a schema, plain text without', async () => {
      const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
      if (wire.name === 'OpenAI') fake.script(reply.text('{"title":"Soup"}'));
      else fake.script(reply.calls({ name: 'structured_answer', args: { title: 'Soup' } }));
      const structured = await wire.task(fake).complete(task({ task: 'recipe_structuring', prompt: 'Soup: water, salt', schema }));
      assert.deepEqual(JSON.parse(structured.text), { title: 'Soup' });
      assert.equal(structured.model, wire.model);
      assert.equal(fake.requests[0]!.stream, false);
      fake.script(reply.text('SELECT 1'));
      assert.equal((await wire.task(fake).complete(task({ task: 'sql_generation', prompt: 'how many?' }))).text, 'SELECT 1');
    });

    test('grounding and images: said in words without a Gemini key, done by Gemini (the named fallback) with one', async () => {
      const alone = selectTaskModel(loadConfig(wire.env(fake)), builtInCatalog());
      const grounded = await modelError(alone.complete(task({ task: 'web_summary', prompt: 'Summarise example.com', grounding: true })));
      assert.equal(grounded.retryable, false);
      assert.match(grounded.message, new RegExp(`${wire.name} cannot ground an answer in a web search here.*set GEMINI_API_KEY`));
      assert.match((await modelError(alone.image(image({ task: 'recipe_image', prompt: 'soup' })))).message, /cannot generate an image/);
      assert.equal(fake.requests.length, 0, 'nothing was asked of a provider that cannot do it');

      const gemini: FakeGemini = await startFakeGemini();
      try {
        gemini.script(geminiReply.grounded('A brewery.', ['example brewery'], [{ uri: 'https://example.com' }]));
        const both = selectTaskModel(
          loadConfig({
            ...wire.env(fake),
            GEMINI_API_KEY: 'gemini-key',
            GEMINI_BASE_URL: gemini.baseUrl,
            MODEL_PROVIDER: wire.name.toLowerCase(),
          }),
          builtInCatalog(),
        );
        const summary = await both.complete(task({ task: 'web_summary', prompt: 'Summarise example.com', grounding: true }));
        assert.equal(summary.text, 'A brewery.');
        assert.deepEqual(summary.grounding?.queries, ['example brewery']);
        assert.equal(gemini.requests.length, 1);
        fake.script(reply.text('SELECT 1'));
        await both.complete(task({ task: 'sql_generation', prompt: 'how many?' }));
        assert.equal(fake.requests.length, 1, `everything else still goes to ${wire.name}`);
      } finally {
        await gemini.close();
      }
    });
  });
}

describe('choosing the provider', () => {
  const keys = { GEMINI_API_KEY: 'g-key', OPENAI_API_KEY: 'o-key', ANTHROPIC_API_KEY: 'a-key' };
  test('one key: that provider; none: offline; several: MODEL_PROVIDER, else Gemini', () => {
    assert.equal(selectProvider(loadConfig({})), undefined);
    assert.equal(selectModel(loadConfig({}), builtInCatalog()).name, 'offline');
    assert.equal(selectProvider(loadConfig({ OPENAI_API_KEY: 'o-key' })), 'openai');
    assert.equal(selectModel(loadConfig({ OPENAI_API_KEY: 'o-key', OPENAI_MODEL: 'llama3.2' }), builtInCatalog()).name, 'llama3.2');
    assert.equal(selectProvider(loadConfig({ ANTHROPIC_API_KEY: 'a-key' })), 'anthropic');
    assert.equal(chatModelName(loadConfig({ ANTHROPIC_API_KEY: 'a-key' })), 'claude-haiku-4-5');
    assert.equal(selectProvider(loadConfig(keys)), 'gemini');
    assert.equal(selectProvider(loadConfig({ ...keys, MODEL_PROVIDER: 'anthropic' })), 'anthropic');
    assert.equal(selectProvider(loadConfig({ ...keys, MODEL_PROVIDER: 'openai' })), 'openai');
  });
  test('MODEL_PROVIDER naming a provider without its key is a configuration error that says so', () => {
    assert.throws(
      () => loadConfig({ GEMINI_API_KEY: 'g-key', MODEL_PROVIDER: 'openai' }),
      /MODEL_PROVIDER: is openai, but OPENAI_API_KEY is not set/,
    );
    assert.throws(() => loadConfig({ MODEL_PROVIDER: 'claude' }), /MODEL_PROVIDER/);
  });
});
