// A local OpenAI-compatible chat-completions server that tests script, so the official `openai` SDK runs end
// to end (as fake-gemini.ts does for @google/genai): POST {baseUrl}/chat/completions with baseUrl ending in /v1,
// SSE chunks with a usage chunk when stream_options.include_usage asks for it, then data: [DONE].
//
//   const fake = await startFakeOpenAi({ apiKey: 'test-key' });
//   fake.script(wireReply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), wireReply.text('Done.'));
//   ... createOpenAiModel({ apiKey: 'test-key', baseUrl: fake.baseUrl, model: 'gpt-4.1-mini' }) ...
import type http from 'node:http';
import { type FakeWire, type WireFormat, type WireRequest, estimateTokens, piecesOf, startFakeWire } from './fake-wire.ts';

export { wireReply as reply } from './fake-wire.ts';
export type FakeOpenAi = FakeWire;

const bearer = (req: http.IncomingMessage) => /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];

function promptTokens(request: WireRequest): number {
  return estimateTokens(JSON.stringify(request.body.messages ?? []));
}

const OPENAI: WireFormat = {
  name: 'fake-openai',
  path: /^\/v1\/chat\/completions$/,
  apiKeyOf: bearer,
  errorBody: (status, message, type) => ({
    error: { message, type: type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'), param: null, code: null },
  }),
  streamError: (type, message) => ({ data: { error: { message, type, param: null, code: null } } }),
  done: 'data: [DONE]\n\n',
  stream(reply, request, serial) {
    const base = { id: `chatcmpl-fake-${serial}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: request.body.model };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      data: { ...base, choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    const groups: ReturnType<WireFormat['stream']> = [[chunk({ role: 'assistant', content: '' })]];
    let output = 0;
    let finish: string;
    if (reply.kind === 'text') {
      for (const piece of piecesOf(reply)) {
        output += estimateTokens(piece);
        groups.push([chunk({ content: piece })]);
      }
      finish = reply.finish ?? 'stop';
    } else {
      if (reply.text) {
        output += estimateTokens(reply.text);
        groups.push([chunk({ content: reply.text })]);
      }
      for (const [index, call] of reply.calls.entries()) {
        const args = JSON.stringify(call.args ?? {});
        output += estimateTokens(args);
        const half = Math.ceil(args.length / 2);
        // the name first, the arguments in two pieces: the SDK's client must put them together
        groups.push([
          chunk({
            tool_calls: [
              { index, id: call.id ?? `call_${serial}_${index}`, type: 'function', function: { name: call.name, arguments: '' } },
            ],
          }),
        ]);
        groups.push([chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] })]);
        groups.push([chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] })]);
      }
      finish = 'tool_calls';
    }
    groups.push([chunk({}, finish)]);
    if (request.body.stream_options?.include_usage) {
      const input = reply.usage?.input ?? promptTokens(request);
      const out = reply.usage?.output ?? output;
      groups.push([{ data: { ...base, choices: [], usage: openAiUsage(input, out, reply.usage?.cached) } }]);
    }
    return groups;
  },
  json(reply, request, serial) {
    const text = reply.kind === 'text' ? piecesOf(reply).join('') : (reply.text ?? null);
    const calls = reply.kind === 'calls' ? reply.calls : [];
    const input = reply.usage?.input ?? promptTokens(request);
    const output = reply.usage?.output ?? estimateTokens(JSON.stringify([text, calls]));
    return {
      id: `chatcmpl-fake-${serial}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: request.body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text,
            refusal: null,
            ...(calls.length
              ? {
                  tool_calls: calls.map((call, i) => ({
                    id: call.id ?? `call_${serial}_${i}`,
                    type: 'function',
                    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
                  })),
                }
              : {}),
          },
          finish_reason: reply.kind === 'text' ? (reply.finish ?? 'stop') : 'tool_calls',
        },
      ],
      usage: openAiUsage(input, output, reply.usage?.cached),
    };
  },
};

function openAiUsage(input: number, output: number, cached: number | undefined) {
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
}

/** `baseUrl` ends in /v1, as OPENAI_BASE_URL does. */
export function startFakeOpenAi(options: { apiKey?: string } = {}): Promise<FakeOpenAi> {
  return startFakeWire(OPENAI, { ...options, basePath: '/v1' });
}

/** Whether a request ends with tool results rather than the user's text. */
export function endsWithToolResults(request: WireRequest): boolean {
  return request.body.messages?.at(-1)?.role === 'tool';
}
