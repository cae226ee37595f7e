// A local Gemini-compatible HTTP server that tests script, so the real @google/genai client runs end to end.
//
//   const fake = await startFakeGemini();
//   fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '13579' } }), reply.text('Done.'));
//   ... createGeminiModel({ apiKey: 'test-key', baseUrl: fake.baseUrl, model: 'gemini-2.5-flash' }) ...
//   assert.equal(fake.requests[0]!.apiKey, 'test-key');
//   await fake.close();
//
// An image model's reply: reply.image(pngBytes) (inline data, for generateContent with responseModalities IMAGE).
//
// Each request takes the next scripted reply; when the queue is empty, the scriptFn handler (if any) answers.
// An unscripted request gets HTTP 500 with status FAKE_UNSCRIPTED and a message naming the request: loud,
// so a test that forgot a reply fails with a reason instead of passing on a made-up answer.
//
// Holding: `const held = reply.hold(reply.text('late'))`; script it; `await held.reached` resolves once the
// request is in (the caller is now mid-call: kill the worker, cancel, ...); `held.release()` lets it answer.
// close() releases every hold and drops open connections.
import { createRequestLog } from './request-log.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SUMMARY_PROMPT_MARK } from '../../src/model/summary-task.ts';
import { TITLE_PROMPT_MARK } from '../../src/model/title-task.ts';

export interface FakeCall {
  name: string;
  args?: Record<string, unknown>;
  /** Gemini 2.x sends no id; Gemini 3 does */
  id?: string;
}

export interface FakeUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  /** the part of promptTokenCount read from a cache, as Gemini reports it (absent: none) */
  cachedContentTokenCount?: number;
}

export interface HoldReply {
  kind: 'hold';
  then: FakeReply;
  /** resolves with the request once it is being held */
  reached: Promise<RecordedRequest>;
  release(): void;
  readonly released: boolean;
}

export type FakeReply =
  /**
   * text streamed in chunks: a string is cut into `pieces` (default 3), an array is sent piece by piece;
   * with `breakAfter` the connection is cut after that many pieces (a stream that dies mid-reply)
   */
  | {
      kind: 'text';
      text: string | string[];
      pieces?: number;
      intervalMs?: number;
      usage?: FakeUsage;
      finishReason?: string;
      breakAfter?: number;
    }
  /** text with Google Search grounding metadata (webSearchQueries, groundingChunks), as a grounded call answers */
  | { kind: 'grounded'; text: string; queries: string[]; sources: { uri: string; title?: string }[] }
  /** function calls in one chunk, after an optional text chunk */
  | { kind: 'calls'; calls: FakeCall[]; text?: string; usage?: FakeUsage }
  /** an HTTP error with Gemini's body: { error: { code, message, status } } */
  | { kind: 'error'; status: number; message?: string; reason?: string }
  /**
   * GenerateContentResponse objects sent as they are (no candidates, blocked prompts, odd finish reasons); a
   * string is sent as its JSON text
   */
  | { kind: 'chunks'; chunks: unknown[] }
  /** the socket is destroyed without an answer: the client sees a network error */
  | { kind: 'drop' }
  | { kind: 'delay'; ms: number; then: FakeReply }
  | HoldReply;

/** What the SDK sends, loosely typed for assertions. */
export interface GeminiRequestBody {
  contents?: { role?: string; parts?: Record<string, any>[] }[];
  systemInstruction?: { role?: string; parts?: { text?: string }[] };
  tools?: { functionDeclarations?: { name: string; description?: string; parametersJsonSchema?: any; parameters?: any }[] }[];
  generationConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface RecordedRequest {
  /** 0-based arrival order */
  index: number;
  method: string;
  /** the path without the query, e.g. /v1beta/models/gemini-2.5-flash:streamGenerateContent */
  path: string;
  query: Record<string, string>;
  /** empty when the path is not a Gemini generate endpoint */
  model: string;
  stream: boolean;
  headers: http.IncomingHttpHeaders;
  /** the x-goog-api-key header */
  apiKey: string | undefined;
  body: GeminiRequestBody;
  /** how the exchange ended: `complete` once the reply was sent whole, `closed` when the caller hung up first */
  ended: Promise<'complete' | 'closed'>;
}

export interface FakeGeminiOptions {
  /** when set, other keys get Gemini's 400 API_KEY_INVALID */
  apiKey?: string;
}

export interface FakeGemini {
  /** pass as GEMINI_BASE_URL / baseUrl */
  baseUrl: string;
  /** every request that reached the server, oldest first */
  requests: RecordedRequest[];
  /** queues replies, consumed one per request in order */
  script(...replies: FakeReply[]): void;
  /** answers requests the queue does not cover; return undefined for the unscripted 500 */
  scriptFn(handler: ((request: RecordedRequest) => FakeReply | undefined) | undefined): void;
  /** scripted replies not yet used */
  readonly pendingReplies: number;
  /**
   * Requests for a conversation's title (src/activities/title.ts), kept apart from `requests` and the queue:
   * they come after a first exchange, in the middle of a test's script. Each is answered with the next of
   * `titles` (a text, or any reply such as a hold; then "A scripted title").
   */
  titleRequests: RecordedRequest[];
  titles: (string | FakeReply)[];
  /**
   * Requests for a conversation's summary (src/activities/compaction.ts) come after a turn, whenever a long
   * conversation passes its window: kept apart like titles and answered "A scripted summary." unless
   * `scriptSummaries` is set, when they join `requests` and the queue as any request (a test of compaction).
   */
  summaryRequests: RecordedRequest[];
  scriptSummaries: boolean;
  /** resolves once `count` requests have arrived */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /**
   * Explicit caches (POST /v1beta/cachedContents), kept apart from `requests`: each one made, with what it holds.
   * A generate call naming one (`cachedContent`) is answered as if its prefix were sent, with that prefix's tokens
   * reported as cachedContentTokenCount.
   */
  caches: { name: string; body: GeminiRequestBody }[];
  /** caches.create requests, refused ones included */
  readonly cacheAttempts: number;
  /** refuse caches.create (HTTP 400, as Gemini answers a model without caching or a prefix below its minimum) */
  refuseCaches: boolean;
  /** refuse a generate call that names a cache (HTTP 400 naming cachedContent, as for an expired one) */
  refuseCachedContent: boolean;
  /** forgets the queue, the handler, the recorded requests and the caches */
  reset(): void;
  close(): Promise<void>;
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

interface HoldState {
  released: Promise<void>;
  reach(request: RecordedRequest): void;
}
const holdStates = new WeakMap<HoldReply, HoldState>();

export const reply = {
  text(
    text: string | string[],
    options: { pieces?: number; intervalMs?: number; usage?: FakeUsage; finishReason?: string; breakAfter?: number } = {},
  ): FakeReply {
    return { kind: 'text', text, ...options };
  },
  calls(...calls: FakeCall[]): FakeReply {
    return { kind: 'calls', calls };
  },
  grounded(text: string, queries: string[] = [], sources: { uri: string; title?: string }[] = []): FakeReply {
    return { kind: 'grounded', text, queries, sources };
  },
  callsWithText(text: string, ...calls: FakeCall[]): FakeReply {
    return { kind: 'calls', calls, text };
  },
  error(status: number, message = `fake-gemini error ${status}`, reason?: string): FakeReply {
    return { kind: 'error', status, message, ...(reason ? { reason } : {}) };
  },
  chunks(...chunks: unknown[]): FakeReply {
    return { kind: 'chunks', chunks };
  },
  /** an image model's answer (generateContent with responseModalities IMAGE): the bytes as inline data */
  image(data: Uint8Array, mimeType = 'image/png'): FakeReply {
    return {
      kind: 'chunks',
      chunks: [
        {
          candidates: [
            {
              content: { role: 'model', parts: [{ inlineData: { mimeType, data: Buffer.from(data).toString('base64') } }] },
              index: 0,
              finishReason: 'STOP',
            },
          ],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1290, totalTokenCount: 1300 },
        },
      ],
    };
  },
  drop(): FakeReply {
    return { kind: 'drop' };
  },
  delay(ms: number, then: FakeReply): FakeReply {
    return { kind: 'delay', ms, then };
  },
  /** answers with `then` once released, by release() or when `until` settles */
  hold(then: FakeReply = reply.text('released'), until?: PromiseLike<unknown>): HoldReply {
    let release!: () => void;
    let reach!: (request: RecordedRequest) => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<RecordedRequest>((resolve) => (reach = resolve));
    let done = false;
    const hold: HoldReply = {
      kind: 'hold',
      then,
      reached,
      release() {
        done = true;
        release();
      },
      get released() {
        return done;
      },
    };
    holdStates.set(hold, { released, reach });
    if (until) until.then(hold.release, hold.release);
    return hold;
  },
};

/** The last content of a request: tests answer differently after user text and after function responses. */
export function lastContent(request: RecordedRequest): { role?: string; parts?: Record<string, any>[] } | undefined {
  return request.body.contents?.at(-1);
}

/** Whether the request ends with tool results (functionResponse parts) rather than the user's text. */
export function endsWithToolResults(request: RecordedRequest): boolean {
  return (lastContent(request)?.parts ?? []).some((part) => part.functionResponse !== undefined);
}

export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const log = createRequestLog<RecordedRequest>('fake-gemini');
  const { requests } = log;
  const titleRequests: RecordedRequest[] = [];
  const titles: (string | FakeReply)[] = [];
  const summaryRequests: RecordedRequest[] = [];
  const summaries = { scripted: false };
  const queue: FakeReply[] = [];
  const holds = new Set<HoldReply>();
  let handler: ((request: RecordedRequest) => FakeReply | undefined) | undefined;
  let responses = 0;
  const caches: { name: string; body: GeminiRequestBody }[] = [];
  const cacheRules = { refuseCaches: false, refuseCachedContent: false, attempts: 0 };

  const server = http.createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, `fake-gemini crashed: ${String(error)}`);
      else res.destroy();
    });
  });

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake-gemini');
    const raw = await readBody(req);
    const endpoint = /^\/(v1beta|v1alpha|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
    let body: GeminiRequestBody = {};
    let badJson = false;
    try {
      body = raw ? (JSON.parse(raw) as GeminiRequestBody) : {};
    } catch {
      badJson = true;
    }
    if (req.method === 'POST' && /^\/(v1beta|v1alpha|v1)\/cachedContents$/.test(url.pathname)) {
      cacheRules.attempts += 1;
      if (cacheRules.refuseCaches) return sendError(res, 400, 'Cached content is too small or not supported for this model.');
      const name = `cachedContents/fake-${caches.length + 1}`;
      caches.push({ name, body });
      return sendJson(res, 200, {
        name,
        model: body.model,
        expireTime: new Date(Date.now() + 300_000).toISOString(),
        usageMetadata: { totalTokenCount: estimateTokens(JSON.stringify({ s: body.systemInstruction, t: body.tools })) },
      });
    }
    const apiKeyHeader = req.headers['x-goog-api-key'];
    const recorded: RecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      model: endpoint?.[2] ?? '',
      stream: endpoint?.[3] === 'streamGenerateContent',
      headers: req.headers,
      apiKey: Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader,
      body,
      ended: new Promise((resolve) => res.once('close', () => resolve(res.writableFinished ? 'complete' : 'closed'))),
    };
    const prompt = body.contents?.[0]?.parts?.[0]?.text;
    if (endpoint && typeof prompt === 'string' && prompt.includes(`\n${TITLE_PROMPT_MARK.said}\n`)) {
      titleRequests.push(recorded);
      const next = titles.shift() ?? 'A scripted title';
      return play(typeof next === 'string' ? reply.text(next) : next, recorded, req, res);
    }
    if (endpoint && !summaries.scripted && typeof prompt === 'string' && prompt.includes(SUMMARY_PROMPT_MARK)) {
      summaryRequests.push(recorded);
      return play(reply.text('A scripted summary.'), recorded, req, res);
    }
    log.add(recorded);

    if (req.method !== 'POST' || !endpoint) {
      return sendError(res, 404, `fake-gemini: no such endpoint ${req.method} ${url.pathname}`);
    }
    if (badJson) return sendError(res, 400, 'Invalid JSON payload received.');
    if (options.apiKey !== undefined && recorded.apiKey !== options.apiKey) {
      return sendError(res, 400, 'API key not valid. Please pass a valid API key.');
    }

    if (typeof body.cachedContent === 'string') {
      const cache = caches.find((made) => made.name === body.cachedContent);
      if (cacheRules.refuseCachedContent || !cache) {
        return sendError(res, 400, `CachedContent not found (or permission denied): ${String(body.cachedContent)}`);
      }
    }

    const next = queue.shift() ?? handler?.(recorded);
    if (!next) {
      return sendError(
        res,
        500,
        `fake-gemini: no reply scripted for request #${recorded.index} (${recorded.path}); script one with fake.script(...) or fake.scriptFn(...)`,
        'FAKE_UNSCRIPTED',
      );
    }
    await play(next, recorded, req, res);
  }

  async function play(next: FakeReply, request: RecordedRequest, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // the caller may have gone (a killed worker, a cancelled call) while this reply waited
    if (res.destroyed || res.writableEnded || !res.socket) return;
    switch (next.kind) {
      case 'delay':
        await sleep(next.ms);
        return play(next.then, request, req, res);
      case 'hold': {
        const state = holdStates.get(next);
        if (!state) throw new Error('hold replies must come from reply.hold()');
        holds.add(next);
        state.reach(request);
        const gone = new Promise<void>((resolve) => res.once('close', () => resolve()));
        await Promise.race([state.released, gone]);
        holds.delete(next);
        return play(next.then, request, req, res);
      }
      case 'error':
        return sendError(res, next.status, next.message ?? `fake-gemini error ${next.status}`, next.reason);
      case 'drop':
        req.socket.destroy();
        return;
      default: {
        const chunks = toChunks(next, request, (responses += 1), cachedTokensOf(request.body.cachedContent));
        const interval = next.kind === 'text' ? (next.intervalMs ?? 0) : 0;
        if (!request.stream) {
          sendJson(res, 200, merge(chunks));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const breakAfter = next.kind === 'text' ? next.breakAfter : undefined;
        for (const [index, chunk] of chunks.entries()) {
          if (index > 0 && interval > 0) await sleep(interval);
          if (res.destroyed) return;
          if (index === breakAfter) {
            req.socket.destroy();
            return;
          }
          // a chunk given as text is sent as it is: JSON no JSON.stringify can write (nested 10,000 deep)
          res.write(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\r\n\r\n`);
        }
        res.end();
      }
    }
  }

  /** the tokens of the prefix a named cache holds (0 for none) */
  function cachedTokensOf(name: unknown): number {
    const cache = typeof name === 'string' ? caches.find((made) => made.name === name) : undefined;
    return cache ? estimateTokens(JSON.stringify({ s: cache.body.systemInstruction, t: cache.body.tools })) : 0;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    titleRequests,
    titles,
    summaryRequests,
    get scriptSummaries() {
      return summaries.scripted;
    },
    set scriptSummaries(scripted: boolean) {
      summaries.scripted = scripted;
    },
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
      titleRequests.length = 0;
      summaryRequests.length = 0;
      titles.length = 0;
      handler = undefined;
      caches.length = 0;
      cacheRules.refuseCaches = false;
      cacheRules.refuseCachedContent = false;
      cacheRules.attempts = 0;
    },
    caches,
    get cacheAttempts() {
      return cacheRules.attempts;
    },
    get refuseCaches() {
      return cacheRules.refuseCaches;
    },
    set refuseCaches(value: boolean) {
      cacheRules.refuseCaches = value;
    },
    get refuseCachedContent() {
      return cacheRules.refuseCachedContent;
    },
    set refuseCachedContent(value: boolean) {
      cacheRules.refuseCachedContent = value;
    },
    async close() {
      for (const hold of holds) hold.release();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

type Chunk = Record<string, unknown>;

function toChunks(next: FakeReply, request: RecordedRequest, serial: number, cached: number): Chunk[] {
  if (next.kind === 'chunks') return next.chunks as Chunk[];
  const promptTokens = estimateTokens(JSON.stringify(request.body.contents ?? [])) + cached;
  const meta = { modelVersion: request.model, responseId: `fake-${serial}` };
  const chunk = (parts: Chunk[], outputSoFar: number, finishReason?: string, usage?: FakeUsage): Chunk => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    usageMetadata: {
      promptTokenCount: usage?.promptTokenCount ?? promptTokens,
      candidatesTokenCount: usage?.candidatesTokenCount ?? outputSoFar,
      totalTokenCount: usage?.totalTokenCount ?? (usage?.promptTokenCount ?? promptTokens) + (usage?.candidatesTokenCount ?? outputSoFar),
      ...(usage?.cachedContentTokenCount !== undefined || cached
        ? { cachedContentTokenCount: usage?.cachedContentTokenCount ?? cached }
        : {}),
    },
    ...meta,
  });

  if (next.kind === 'text') {
    const pieces = Array.isArray(next.text) ? next.text : split(next.text, next.pieces ?? 3);
    let output = 0;
    return pieces.map((piece, index) => {
      output += estimateTokens(piece);
      const last = index === pieces.length - 1;
      return chunk([{ text: piece }], output, last ? (next.finishReason ?? 'STOP') : undefined, last ? next.usage : undefined);
    });
  }

  if (next.kind === 'grounded') {
    const grounded = chunk([{ text: next.text }], estimateTokens(next.text), 'STOP');
    (grounded.candidates as Chunk[])[0]!.groundingMetadata = {
      webSearchQueries: next.queries,
      groundingChunks: next.sources.map((source) => ({ web: { uri: source.uri, title: source.title ?? source.uri } })),
    };
    return [grounded];
  }

  if (next.kind === 'calls') {
    const chunks: Chunk[] = [];
    let output = 0;
    if (next.text) {
      output += estimateTokens(next.text);
      chunks.push(chunk([{ text: next.text }], output));
    }
    output += estimateTokens(JSON.stringify(next.calls));
    const parts = next.calls.map((call) => ({
      functionCall: { name: call.name, args: call.args ?? {}, ...(call.id ? { id: call.id } : {}) },
    }));
    chunks.push(chunk(parts, output, 'STOP', next.usage));
    return chunks;
  }
  throw new Error(`fake-gemini: ${next.kind} is not a content reply`);
}

/** generateContent (not streamed) answers with the chunks folded into one response. */
function merge(chunks: Chunk[]): Chunk {
  if (chunks.length === 1) return chunks[0]!;
  const parts: unknown[] = [];
  let merged: Chunk = {};
  let candidate: Chunk | undefined;
  for (const chunk of chunks) {
    merged = { ...merged, ...chunk };
    const first = (chunk.candidates as Chunk[] | undefined)?.[0];
    if (!first) continue;
    candidate = { ...candidate, ...first };
    parts.push(...(((first.content as Chunk | undefined)?.parts as unknown[] | undefined) ?? []));
  }
  if (candidate) merged.candidates = [{ ...candidate, content: { role: 'model', parts } }];
  return merged;
}

function split(text: string, pieces: number): string[] {
  const characters = Array.from(text);
  const size = Math.max(1, Math.ceil(characters.length / Math.max(1, pieces)));
  const out: string[] = [];
  for (let start = 0; start < characters.length; start += size) out.push(characters.slice(start, start + size).join(''));
  return out.length > 0 ? out : [''];
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function sendError(res: http.ServerResponse, status: number, message: string, reason?: string): void {
  sendJson(res, status, { error: { code: status, message, status: reason ?? STATUS_NAMES[status] ?? 'UNKNOWN' } });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
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
