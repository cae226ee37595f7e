// A local Anthropic Messages-API server that tests script, so the official `@anthropic-ai/sdk` runs end to end
// (as fake-gemini.ts does for @google/genai): POST {baseUrl}/v1/messages, SSE events message_start,
// content_block_start/delta/stop (text_delta, input_json_delta), message_delta (stop_reason, usage), message_stop.
//
//   const fake = await startFakeAnthropic({ apiKey: 'test-key' });
//   fake.script(wireReply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), wireReply.text('Done.'));
//   ... createAnthropicModel({ apiKey: 'test-key', baseUrl: fake.baseUrl, model: 'claude-haiku-4-5' }) ...
import type http from 'node:http';
import { type FakeWire, type SseEvent, type WireFormat, type WireRequest, estimateTokens, piecesOf, startFakeWire } from './fake-wire.ts';

export { wireReply as reply } from './fake-wire.ts';
export type FakeAnthropic = FakeWire;

// x-api-key, as the API documents it; the SDK's 1.x sends the key as a bearer token, which the API takes too
const header = (req: http.IncomingMessage) => {
  const key = req.headers['x-api-key'];
  return (Array.isArray(key) ? key[0] : key) ?? /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
};

function promptTokens(request: WireRequest): number {
  return estimateTokens(JSON.stringify([request.body.system ?? '', request.body.messages ?? []]));
}

const event = (type: string, data: Record<string, unknown>): SseEvent => ({ event: type, data: { type, ...data } });

const ANTHROPIC: WireFormat = {
  name: 'fake-anthropic',
  path: /^\/v1\/messages$/,
  apiKeyOf: header,
  errorBody: (status, message, type) => ({
    type: 'error',
    error: {
      type:
        type ??
        (status === 529 ? 'overloaded_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error'),
      message,
    },
  }),
  streamError: (type, message) => event('error', { error: { type, message } }),
  stream(reply, request, serial) {
    const input = reply.usage?.input ?? promptTokens(request);
    const groups: SseEvent[][] = [
      [
        event('message_start', {
          message: {
            id: `msg_fake_${serial}`,
            type: 'message',
            role: 'assistant',
            model: request.body.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: anthropicInput(input, reply.usage?.cached, 1),
          },
        }),
      ],
    ];
    let output = 0;
    let index = 0;
    let stop: string;
    const textBlock = (pieces: string[]) => {
      groups.push([event('content_block_start', { index, content_block: { type: 'text', text: '' } })]);
      for (const piece of pieces) {
        output += estimateTokens(piece);
        groups.push([event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } })]);
      }
      groups.push([event('content_block_stop', { index })]);
      index += 1;
    };
    if (reply.kind === 'text') {
      textBlock(piecesOf(reply));
      stop = reply.finish ?? 'end_turn';
    } else {
      if (reply.text) textBlock([reply.text]);
      for (const call of reply.calls) {
        const args = JSON.stringify(call.args ?? {});
        output += estimateTokens(args);
        const half = Math.ceil(args.length / 2);
        groups.push([
          event('content_block_start', {
            index,
            content_block: { type: 'tool_use', id: call.id ?? `toolu_fake_${serial}_${index}`, name: call.name, input: {} },
          }),
        ]);
        groups.push([event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: args.slice(0, half) } })]);
        groups.push([event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: args.slice(half) } })]);
        groups.push([event('content_block_stop', { index })]);
        index += 1;
      }
      stop = 'tool_use';
    }
    groups.push([
      event('message_delta', {
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: reply.usage?.output ?? output },
      }),
      event('message_stop', {}),
    ]);
    return groups;
  },
  json(reply, request, serial) {
    const text = reply.kind === 'text' ? piecesOf(reply).join('') : reply.text;
    const calls = reply.kind === 'calls' ? reply.calls : [];
    return {
      id: `msg_fake_${serial}`,
      type: 'message',
      role: 'assistant',
      model: request.body.model,
      content: [
        ...(text ? [{ type: 'text', text }] : []),
        ...calls.map((call, i) => ({
          type: 'tool_use',
          id: call.id ?? `toolu_fake_${serial}_${i}`,
          name: call.name,
          input: call.args ?? {},
        })),
      ],
      stop_reason: reply.kind === 'text' ? (reply.finish ?? 'end_turn') : 'tool_use',
      stop_sequence: null,
      usage: anthropicInput(
        reply.usage?.input ?? promptTokens(request),
        reply.usage?.cached,
        reply.usage?.output ?? estimateTokens(JSON.stringify([text, calls])),
      ),
    };
  },
};

/** Anthropic's input_tokens leaves out what was read from the cache (cache_read_input_tokens). */
function anthropicInput(input: number, cached: number | undefined, output: number) {
  return cached === undefined
    ? { input_tokens: input, output_tokens: output }
    : { input_tokens: input - cached, cache_read_input_tokens: cached, output_tokens: output };
}

/** `baseUrl` has no /v1, as ANTHROPIC_BASE_URL does not. */
export function startFakeAnthropic(options: { apiKey?: string } = {}): Promise<FakeAnthropic> {
  return startFakeWire(ANTHROPIC, options);
}

/** Whether a request ends with tool results (tool_result blocks) rather than the user's text. */
export function endsWithToolResults(request: WireRequest): boolean {
  const last = request.body.messages?.at(-1);
  return Array.isArray(last?.content) && last.content.some((block: { type?: string }) => block.type === 'tool_result');
}
