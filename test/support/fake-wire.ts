// The shared core of the OpenAI-wire and Anthropic-wire servers that tests script (fake-openai.ts,
// fake-anthropic.ts), so the official SDKs run end to end against them as @google/genai does against
// fake-gemini.ts. The replies are one vocabulary for both wires (and for the eval's scripts): text streamed in
// pieces, tool calls, an HTTP error, an error event mid-stream, a dropped socket, a delay, a hold.
// An unscripted request gets HTTP 500 naming it: a test that forgot a reply fails with a reason.
import { createRequestLog } from './request-log.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WireCall {
  name: string;
  args?: Record<string, unknown>;
  id?: string;
}
export interface WireUsage {
  input?: number;
  output?: number;
  /** the part of `input` read from the provider's prompt cache (OpenAI: prompt_tokens_details.cached_tokens; Anthropic: cache_read_input_tokens) */
  cached?: number;
}

export interface WireHold {
  kind: 'hold';
  then: WireReply;
  reached: Promise<WireRequest>;
  release(): void;
}

export type WireReply =
  | { kind: 'text'; text: string | string[]; pieces?: number; intervalMs?: number; usage?: WireUsage; finish?: string; breakAfter?: number }
  | { kind: 'calls'; calls: WireCall[]; text?: string; usage?: WireUsage }
  | { kind: 'error'; status: number; message?: string; type?: string }
  /** HTTP 200, then an error event in the stream (Anthropic's overloaded_error, an OpenAI error chunk) */
  | { kind: 'streamError'; type: string; message?: string }
  | { kind: 'drop' }
  | { kind: 'delay'; ms: number; then: WireReply }
  /** stream events sent as they are (another server's dialect of the wire format) */
  | { kind: 'events'; events: SseEvent[] }
  | WireHold;

export interface WireRequest {
  index: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** the key the client sent (Authorization: Bearer, or x-api-key) */
  apiKey: string | undefined;
  body: Record<string, any>;
  stream: boolean;
  ended: Promise<'complete' | 'closed'>;
}

/** One SSE event: `event:` line (Anthropic) or none (OpenAI), and its data. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

export interface WireFormat {
  name: string;
  /** the endpoint, e.g. /v1/chat/completions */
  path: RegExp;
  apiKeyOf(req: http.IncomingMessage): string | undefined;
  errorBody(status: number, message: string, type?: string): unknown;
  /** the streamed events of a content reply, as chunks to send with pauses between (one array per pause) */
  stream(reply: Extract<WireReply, { kind: 'text' | 'calls' }>, request: WireRequest, serial: number): SseEvent[][];
  /** the same reply unstreamed */
  json(reply: Extract<WireReply, { kind: 'text' | 'calls' }>, request: WireRequest, serial: number): unknown;
  streamError(type: string, message: string): SseEvent;
  /** what ends a stream after its last event ([DONE] for OpenAI) */
  done?: string;
}

export const wireReply = {
  text(
    text: string | string[],
    options: { pieces?: number; intervalMs?: number; usage?: WireUsage; finish?: string; breakAfter?: number } = {},
  ): WireReply {
    return { kind: 'text', text, ...options };
  },
  calls(...calls: WireCall[]): WireReply {
    return { kind: 'calls', calls };
  },
  callsWithText(text: string, ...calls: WireCall[]): WireReply {
    return { kind: 'calls', calls, text };
  },
  error(status: number, message = `fake error ${status}`, type?: string): WireReply {
    return { kind: 'error', status, message, ...(type ? { type } : {}) };
  },
  streamError(type: string, message = type): WireReply {
    return { kind: 'streamError', type, message };
  },
  drop(): WireReply {
    return { kind: 'drop' };
  },
  events(...events: SseEvent[]): WireReply {
    return { kind: 'events', events };
  },
  delay(ms: number, then: WireReply): WireReply {
    return { kind: 'delay', ms, then };
  },
  hold(then: WireReply = { kind: 'text', text: 'released' }): WireHold {
    let release!: () => void;
    let reach!: (request: WireRequest) => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<WireRequest>((resolve) => (reach = resolve));
    const hold: WireHold = { kind: 'hold', then, reached, release };
    holdStates.set(hold, { released, reach });
    return hold;
  },
};

const holdStates = new WeakMap<WireHold, { released: Promise<void>; reach(request: WireRequest): void }>();

export interface FakeWire {
  baseUrl: string;
  requests: WireRequest[];
  script(...replies: WireReply[]): void;
  scriptFn(handler: ((request: WireRequest) => WireReply | undefined) | undefined): void;
  readonly pendingReplies: number;
  waitForRequests(count: number, timeoutMs?: number): Promise<WireRequest[]>;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeWire(format: WireFormat, options: { apiKey?: string; basePath?: string } = {}): Promise<FakeWire> {
  const log = createRequestLog<WireRequest>(format.name);
  const { requests } = log;
  const queue: WireReply[] = [];
  const holds = new Set<WireHold>();
  let handler: ((request: WireRequest) => WireReply | undefined) | undefined;
  let serial = 0;

  const server = http.createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, format.errorBody(500, `${format.name} crashed: ${String(error)}`));
      else res.destroy();
    });
  });

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = await readBody(req);
    let body: Record<string, any> = {};
    let badJson = false;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      badJson = true;
    }
    const recorded: WireRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: req.headers,
      apiKey: format.apiKeyOf(req),
      body,
      stream: body.stream === true,
      ended: new Promise((resolve) => res.once('close', () => resolve(res.writableFinished ? 'complete' : 'closed'))),
    };
    log.add(recorded);
    if (req.method !== 'POST' || !format.path.test(url.pathname))
      return sendJson(res, 404, format.errorBody(404, `${format.name}: no such endpoint ${req.method} ${url.pathname}`, 'not_found_error'));
    if (badJson) return sendJson(res, 400, format.errorBody(400, 'Invalid JSON body', 'invalid_request_error'));
    if (options.apiKey !== undefined && recorded.apiKey !== options.apiKey) {
      return sendJson(res, 401, format.errorBody(401, 'Incorrect API key provided', 'authentication_error'));
    }
    const next = queue.shift() ?? handler?.(recorded);
    if (!next) {
      return sendJson(
        res,
        500,
        format.errorBody(500, `${format.name}: no reply scripted for request #${recorded.index} (${recorded.path})`, 'FAKE_UNSCRIPTED'),
      );
    }
    await play(next, recorded, req, res);
  }

  async function play(next: WireReply, request: WireRequest, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (res.destroyed || res.writableEnded || !res.socket) return;
    switch (next.kind) {
      case 'delay':
        await sleep(next.ms);
        return play(next.then, request, req, res);
      case 'hold': {
        const state = holdStates.get(next)!;
        holds.add(next);
        state.reach(request);
        const gone = new Promise<void>((resolve) => res.once('close', () => resolve()));
        await Promise.race([state.released, gone]);
        holds.delete(next);
        return play(next.then, request, req, res);
      }
      case 'error':
        return sendJson(res, next.status, format.errorBody(next.status, next.message ?? `fake error ${next.status}`, next.type));
      case 'drop':
        req.socket.destroy();
        return;
      case 'events':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(next.events.map(sse).join('') + (format.done ?? ''));
        return;
      case 'streamError':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(sse(format.streamError(next.type, next.message ?? next.type)));
        return;
      default: {
        serial += 1;
        if (!request.stream) return sendJson(res, 200, format.json(next, request, serial));
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const groups = format.stream(next, request, serial);
        const interval = next.kind === 'text' ? (next.intervalMs ?? 0) : 0;
        const breakAfter = next.kind === 'text' ? next.breakAfter : undefined;
        for (const [index, group] of groups.entries()) {
          if (index > 0 && interval > 0) await sleep(interval);
          if (res.destroyed) return;
          if (index === breakAfter) {
            req.socket.destroy();
            return;
          }
          res.write(group.map(sse).join(''));
        }
        if (format.done) res.write(format.done);
        res.end();
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${options.basePath ?? ''}`,
    requests,
    script(...replies) {
      queue.push(...replies);
    },
    scriptFn(fn) {
      handler = fn;
    },
    get pendingReplies() {
      return queue.length;
    },
    waitForRequests: log.waitFor,
    reset() {
      queue.length = 0;
      requests.length = 0;
      handler = undefined;
    },
    async close() {
      for (const hold of holds) hold.release();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function sse(event: SseEvent): string {
  return `${event.event ? `event: ${event.event}\n` : ''}data: ${JSON.stringify(event.data)}\n\n`;
}

/** A text reply's pieces: an array as it is, a string cut into `pieces` (default 3). */
export function piecesOf(reply: Extract<WireReply, { kind: 'text' }>): string[] {
  if (Array.isArray(reply.text)) return reply.text;
  const characters = Array.from(reply.text);
  const count = Math.max(1, reply.pieces ?? 3);
  const size = Math.max(1, Math.ceil(characters.length / count));
  const out: string[] = [];
  for (let start = 0; start < characters.length; start += size) out.push(characters.slice(start, start + size).join(''));
  return out.length ? out : [''];
}

export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
