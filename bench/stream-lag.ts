// `npm run bench:stream`: how fast streamed model text reaches an SSE client, end to end through the real stack.
// The bench process holds the two ends and one clock: a Gemini-wire HTTP server that streams each reply's pieces
// at known times and stamps each write, and SSE clients (plain fetch) that stamp when each piece's text has
// arrived. Between them run the real `npm run api` and `npm run worker` as processes of their own, the worker's
// @google/genai client pointed at the bench's server (GEMINI_BASE_URL), on embedded PostgreSQL and the Temporal
// dev server (bench/services.ts). Several conversations stream at once, each with its SSE client connected.
//
// A piece counts as arrived when the client holds the reply's text up to the piece's end, from whatever carried
// it: a live delta, a persisted `message.delta` row or the final `message`. Lag = arrival - the server's write.
//
// Two runs: paced (BENCH_STREAM_PIECES pieces BENCH_STREAM_INTERVAL_MS apart: the lag targets) and fast
// (BENCH_STREAM_FAST_PIECES pieces BENCH_STREAM_FAST_INTERVAL_MS apart: the write-rate check). Writes attributable
// to deltas: transactions that wrote `message.delta` rows and no `message` (the final one carries the tail), by
// each row's xmin, per second of each step's stream. Prints aligned text, then one JSON line. Settings (env):
//   BENCH_STREAM_CONVERSATIONS=6       conversations streaming at once (their first turns spread over one reply)
//   BENCH_STREAM_TURNS=4               paced turns per conversation (after one unmeasured warm-up turn)
//   BENCH_STREAM_PIECES=40  BENCH_STREAM_INTERVAL_MS=20
//   BENCH_STREAM_FAST_TURNS=2  BENCH_STREAM_FAST_PIECES=200  BENCH_STREAM_FAST_INTERVAL_MS=2
//   BENCH_DATABASE_URL, BENCH_TEMPORAL_ADDRESS: see bench/services.ts
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../stack/ports.ts';
import { enableStatementStats, statementSnapshot, type StatementSnapshot } from './pg-statements.ts';
import { startServices } from './services.ts';
import { round, summarise, type Summary } from './stats.ts';
import { sseFrames } from '../test/support/sse.ts';

const int = (name: string, fallback: number, min = 1) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}`);
  return value;
};
const CONVERSATIONS = int('BENCH_STREAM_CONVERSATIONS', 6);
const TURNS = int('BENCH_STREAM_TURNS', 4);
const PIECES = int('BENCH_STREAM_PIECES', 40);
const INTERVAL_MS = int('BENCH_STREAM_INTERVAL_MS', 20, 0);
const FAST_TURNS = int('BENCH_STREAM_FAST_TURNS', 2, 0);
const FAST_PIECES = int('BENCH_STREAM_FAST_PIECES', 200);
const FAST_INTERVAL_MS = int('BENCH_STREAM_FAST_INTERVAL_MS', 2, 0);

const TARGET = { firstP50: 15, everyP95: 30 };
const TOKEN = 'bench-stream-token-0000000000000';
const USER = 'bench-stream';
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the model: a Gemini-wire server whose replies are scripted per turn, every write stamped ----

interface Plan {
  pieces: string[];
  intervalMs: number;
  /** performance.now() when each piece was written */
  sent: number[];
  done: Promise<void>;
  finish(): void;
}

/** `[bench <conversation>/<turn>]` in the user's text names the turn; its plan says what to stream. */
const plans = new Map<string, Plan>();
const tagOf = (text: string) => /\[bench (\d+\/\d+)\]/.exec(text)?.[1];

function plan(tag: string, pieces: number, intervalMs: number, label: string): Plan {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const texts = Array.from({ length: pieces }, (_, i) => `${label}${String(i).padStart(4, '0')} `);
  const entry: Plan = { pieces: texts, intervalMs, sent: [], done, finish };
  plans.set(tag, entry);
  return entry;
}

async function startModelServer(): Promise<{ baseUrl: string; unplanned: number; close(): Promise<void> }> {
  let unplanned = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const userText = JSON.stringify(body.contents?.at(-1) ?? {});
      const tag = tagOf(userText);
      const entry = tag ? plans.get(tag) : undefined;
      const chunk = (text: string, last: boolean) =>
        `data: ${JSON.stringify({
          candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
          usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 2, totalTokenCount: 102 },
          modelVersion: 'bench-model',
        })}\r\n\r\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.socket?.setNoDelay(true);
      if (!entry) {
        unplanned += 1;
        res.end(chunk('ok', true));
        return;
      }
      const start = performance.now();
      for (const [index, piece] of entry.pieces.entries()) {
        // on an absolute schedule, so timer drift does not add up over a fast stream
        const wait = start + index * entry.intervalMs - performance.now();
        if (wait > 0) await sleep(wait);
        entry.sent[index] = performance.now();
        res.write(chunk(piece, index === entry.pieces.length - 1));
      }
      res.end();
      entry.finish();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get unplanned() {
      return unplanned;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- the SSE client: one per conversation, stamping when each piece's text has arrived ----

interface Reply {
  tag: string;
  messageId?: string;
  /** the contiguous text received so far, and pieces that arrived ahead of a gap, by offset */
  text: string;
  ahead: Map<number, string>;
  /** the persisted chunks' running length, for servers whose rows carry no offset */
  chunked: number;
  arrived: number[];
  ended: Promise<void>;
  end(): void;
}

class StreamClient {
  /** replies in the order their turns were sent; a new message id belongs to the oldest unclaimed one */
  readonly replies: Reply[] = [];
  private readonly byMessage = new Map<string, Reply>();
  private readonly controller = new AbortController();
  liveFrames = 0;
  rowFrames = 0;

  private readonly url: string;
  private readonly plansByTag: Map<string, Plan>;

  constructor(url: string, plansByTag: Map<string, Plan>) {
    this.url = url;
    this.plansByTag = plansByTag;
  }

  expect(tag: string): Reply {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const reply: Reply = { tag, text: '', ahead: new Map(), chunked: 0, arrived: [], ended, end };
    this.replies.push(reply);
    return reply;
  }

  async open(): Promise<void> {
    const response = await fetch(this.url, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' },
      signal: this.controller.signal,
    });
    if (response.status !== 200) throw new Error(`SSE answered ${response.status}`);
    void this.read(response.body!).catch(() => undefined);
  }

  close(): void {
    this.controller.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    for await (const frame of sseFrames(body)) {
      if (frame.data) this.onEvent(JSON.parse(frame.data), frame.id === undefined, performance.now());
    }
  }

  private onEvent(event: { type: string; data: any }, live: boolean, at: number): void {
    if (event.type === 'message.delta') {
      if (live) this.liveFrames += 1;
      else this.rowFrames += 1;
      const reply = this.claim(String(event.data.messageId));
      if (!reply) return;
      const text = String(event.data.text ?? '');
      const offset = typeof event.data.offset === 'number' ? event.data.offset : reply.chunked;
      if (!live && typeof event.data.offset !== 'number') reply.chunked += text.length;
      this.add(reply, offset, text, at);
    } else if (event.type === 'message' && event.data?.role === 'assistant') {
      const reply = this.claim(String(event.data.id));
      if (!reply) return;
      this.add(reply, 0, String(event.data.text ?? ''), at);
      reply.end();
    }
  }

  private claim(messageId: string): Reply | undefined {
    let reply = this.byMessage.get(messageId);
    if (!reply) {
      reply = this.replies.find((candidate) => !candidate.messageId);
      if (!reply) return undefined;
      reply.messageId = messageId;
      this.byMessage.set(messageId, reply);
    }
    return reply;
  }

  private add(reply: Reply, offset: number, text: string, at: number): void {
    const known = reply.ahead.get(offset);
    if (!known || known.length < text.length) reply.ahead.set(offset, text);
    for (let moved = true; moved;) {
      moved = false;
      for (const [start, piece] of reply.ahead) {
        if (start > reply.text.length) continue;
        if (start + piece.length > reply.text.length) reply.text += piece.slice(reply.text.length - start);
        reply.ahead.delete(start);
        moved = true;
      }
    }
    const entry = this.plansByTag.get(reply.tag);
    if (!entry) return;
    let end = 0;
    for (const [index, piece] of entry.pieces.entries()) {
      end += piece.length;
      if (end > reply.text.length) break;
      reply.arrived[index] ??= at;
    }
  }
}

// ---- the stack: the API and a worker as processes of their own ----

function startProcess(name: string, file: string, env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [file], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready:\n${output}`)));
  });
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// ---- a run: every conversation takes its turns one after another, all conversations at once ----

interface RunResult {
  name: string;
  pieces: number;
  intervalMs: number;
  turns: number;
  first: Summary;
  every: Summary;
  /** per streaming step: transactions that wrote deltas and no final message, per second of the step's stream */
  deltaWritesPerSecond: Summary;
  deltaWrites: number;
  deltaRows: number;
  /** at most one per 100 ms of each step's stream, as the 100 ms batching allows */
  deltaWritesAllowed: number;
  streamSeconds: number;
  /** statements that call pg_notify (the events trigger's, and live deltas'), from pg_stat_statements */
  notifyStatements: number;
  walBytes: number;
  transactions: number;
  wallSeconds: number;
  liveFrames: number;
  rowFrames: number;
  /** of one core, during the run */
  cpuPercent: { api: number | null; worker: number | null };
}

async function main(): Promise<void> {
  const started = performance.now();
  const services = await startServices(() => undefined);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-bench-stream-'));
  const model = await startModelServer();
  const admin = new pg.Pool({ connectionString: services.databaseUrl, max: 2 });
  admin.on('error', () => undefined);
  let api: ChildProcess | undefined;
  let worker: ChildProcess | undefined;
  const clients: StreamClient[] = [];
  try {
    const statements = await enableStatementStats(services.databaseUrl);
    const port = await freePort();
    const env = {
      DATABASE_URL: services.databaseUrl,
      TEMPORAL_ADDRESS: services.temporalAddress,
      TEMPORAL_TASK_QUEUE: `bench-stream-${process.pid}`,
      WORKFLOW_BUNDLE_PATH: services.bundlePath,
      GEMINI_API_KEY: 'bench-key',
      GEMINI_BASE_URL: model.baseUrl,
      API_TOKENS: JSON.stringify({ [TOKEN]: { user: USER, roles: ['support'] } }),
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // one user stands for many: the per-user limits would measure themselves, not the stream
      USER_EVENT_STREAMS: '0',
      USER_NEW_CONVERSATIONS_PER_MINUTE: '0',
      USER_TURNS_PER_MINUTE: '0',
      USER_REQUESTS_PER_MINUTE: '0',
      USER_CONCURRENT_REQUESTS: '0',
    };
    [worker, api] = await Promise.all([
      startProcess('worker', 'bin/worker.ts', env, /is polling task queue/),
      startProcess('api', 'bin/api.ts', env, /API listening on/),
    ]);
    const baseUrl = `http://127.0.0.1:${port}`;
    const call = async (method: string, url: string, body?: unknown): Promise<any> => {
      const response = await fetch(`${baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed = await response.json();
      if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${JSON.stringify(parsed)}`);
      return parsed;
    };

    const conversations: string[] = [];
    for (let c = 0; c < CONVERSATIONS; c += 1) {
      const { id } = await call('POST', '/v1/conversations', { agent: 'support', title: `stream bench ${c}` });
      conversations.push(id);
      const client = new StreamClient(`${baseUrl}/v1/conversations/${id}/events`, plans);
      await client.open();
      clients.push(client);
    }

    let turnSerial = 0;
    const turn = async (c: number, pieces: number, intervalMs: number, label: string) => {
      const tag = `${c}/${(turnSerial += 1)}`;
      const entry = plan(tag, pieces, intervalMs, label);
      const reply = clients[c]!.expect(tag);
      await call('POST', `/v1/conversations/${conversations[c]}/messages`, { text: `tell me a story [bench ${tag}]` });
      await entry.done;
      await Promise.race([reply.ended, sleep(10_000)]);
      const arrived = Array.from({ length: pieces }, (_, index) => reply.arrived[index]).filter((at) => at !== undefined).length;
      if (arrived < pieces) throw new Error(`turn ${tag}: ${arrived} of ${pieces} pieces reached the SSE client`);
      return { entry, reply };
    };

    const run = async (name: string, turns: number, pieces: number, intervalMs: number, label: string): Promise<RunResult> => {
      const before = await counters(admin, services.databaseUrl, statements);
      const cpuBefore = { api: cpuTicks(api!.pid!), worker: cpuTicks(worker!.pid!) };
      const frames = { live: sum(clients, (c) => c.liveFrames), rows: sum(clients, (c) => c.rowFrames) };
      const runStarted = performance.now();
      const done = await Promise.all(
        conversations.map(async (_, c) => {
          // independent users: the conversations' turns start spread over one reply's length, not all at once
          await sleep((c * pieces * intervalMs) / conversations.length);
          const mine = [];
          for (let t = 0; t < turns; t += 1) mine.push(await turn(c, pieces, intervalMs, label));
          return mine;
        }),
      );
      const wallSeconds = (performance.now() - runStarted) / 1000;
      const after = await counters(admin, services.databaseUrl, statements);
      const cpu = {
        api: (cpuTicks(api!.pid!) - cpuBefore.api) / TICKS_PER_SECOND / wallSeconds,
        worker: (cpuTicks(worker!.pid!) - cpuBefore.worker) / TICKS_PER_SECOND / wallSeconds,
      };
      const all = done.flat();
      const first: number[] = [];
      const every: number[] = [];
      for (const { entry, reply } of all) {
        first.push(reply.arrived[0]! - entry.sent[0]!);
        entry.sent.forEach((sent, index) => every.push(reply.arrived[index]! - sent));
      }
      const writes = await deltaWrites(
        admin,
        all.map(({ reply }) => reply.messageId!),
      );
      const perStep: number[] = [];
      let allowed = 0;
      let streamSeconds = 0;
      for (const { entry, reply } of all) {
        const seconds = Math.max(entry.sent.at(-1)! - entry.sent[0]!, 1) / 1000;
        streamSeconds += seconds;
        allowed += Math.ceil((seconds * 1000) / 100);
        perStep.push((writes.byStep.get(reply.messageId!) ?? 0) / seconds);
      }
      return {
        name,
        pieces,
        intervalMs,
        turns: all.length,
        first: summarise(first),
        every: summarise(every),
        deltaWritesPerSecond: summarise(perStep),
        deltaWrites: writes.total,
        deltaRows: writes.rows,
        deltaWritesAllowed: allowed,
        streamSeconds,
        notifyStatements: statementCalls(before.statements, after.statements, /pg_notify/i),
        walBytes: after.wal - before.wal,
        transactions: after.transactions - before.transactions,
        wallSeconds,
        liveFrames: sum(clients, (c) => c.liveFrames) - frames.live,
        rowFrames: sum(clients, (c) => c.rowFrames) - frames.rows,
        cpuPercent: { api: round(cpu.api * 100), worker: round(cpu.worker * 100) },
      };
    };

    log(
      `stream bench: ${CONVERSATIONS} conversations; warm-up, then ${TURNS} paced turns (${PIECES} x ${INTERVAL_MS} ms) and ${FAST_TURNS} fast turns (${FAST_PIECES} x ${FAST_INTERVAL_MS} ms) each`,
    );
    await run('warm-up', 1, 10, INTERVAL_MS, 'u');
    const paced = await run('paced', TURNS, PIECES, INTERVAL_MS, 'p');
    const fast = FAST_TURNS > 0 ? await run('fast', FAST_TURNS, FAST_PIECES, FAST_INTERVAL_MS, 'f') : undefined;

    const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const ms = (value: number) => `${round(value)} ms`;
    const lines = [
      '',
      `Streamed text, model server -> @google/genai in the worker -> PostgreSQL -> API -> SSE client (${CONVERSATIONS} conversations at once)`,
      `(${services.describe.postgres}; Temporal: ${services.describe.temporal}; API and worker in processes of their own)`,
    ];
    for (const result of [paced, fast]) {
      if (!result) continue;
      const judged = result === paced;
      lines.push(
        '',
        `${result.name}: ${result.turns} replies of ${result.pieces} pieces ${result.intervalMs} ms apart (${result.liveFrames} live delta frames, ${result.rowFrames} delta rows sent)`,
        `  first piece lag:  p50 ${ms(result.first.p50)}, p95 ${ms(result.first.p95)}${judged ? `   target p50 <= ${TARGET.firstP50} ms: ${met(result.first.p50 <= TARGET.firstP50)}` : ''}`,
        `  every piece lag:  p50 ${ms(result.every.p50)}, p95 ${ms(result.every.p95)}, max ${ms(result.every.max)}${judged ? `   target p95 <= ${TARGET.everyP95} ms: ${met(result.every.p95 <= TARGET.everyP95)}` : ''}`,
        `  delta writes:     ${result.deltaWrites} transactions (${result.deltaRows} rows) over ${round(result.streamSeconds, 2)} s of streaming: ` +
          `${round(result.deltaWrites / result.streamSeconds)}/s per streaming step (max ${round(result.deltaWritesPerSecond.max)}), ` +
          `${round(result.deltaWrites / result.wallSeconds)}/s in all   target <= 1 per 100 ms per step (${result.deltaWritesAllowed}): ${met(result.deltaWrites <= result.deltaWritesAllowed)}`,
        `  besides:          ${round(result.notifyStatements / result.streamSeconds)} NOTIFY statements/s per streaming step, ${round(result.transactions / result.wallSeconds)} transactions/s and ` +
          `${round(result.walBytes / 1024 / result.wallSeconds)} KiB/s of WAL in all; CPU: API ${result.cpuPercent.api}%, worker ${result.cpuPercent.worker}% of a core`,
      );
    }
    lines.push(
      '',
      `(${Math.round((performance.now() - started) / 1000)} s on ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}; ${model.unplanned} unplanned model calls)`,
    );
    console.log(lines.join('\n'));
    const figures = (result: RunResult | undefined) =>
      result && {
        ...result,
        first: rounded(result.first),
        every: rounded(result.every),
        deltaWritesPerSecond: rounded(result.deltaWritesPerSecond),
        deltaWritesPerStepSecond: round(result.deltaWrites / result.streamSeconds),
        notifyStatementsPerStepSecond: round(result.notifyStatements / result.streamSeconds),
      };
    console.log(
      JSON.stringify({
        bench: 'stream-lag',
        settings: { CONVERSATIONS, TURNS, PIECES, INTERVAL_MS, FAST_TURNS, FAST_PIECES, FAST_INTERVAL_MS },
        // the same shape as every bench's targets (bench/all.ts prints them side by side)
        targets: {
          [`first piece of a reply at the client p50 <= ${TARGET.firstP50} ms`]: {
            value: `${round(paced.first.p50)} ms`,
            met: paced.first.p50 <= TARGET.firstP50,
          },
          [`every piece at the client p95 <= ${TARGET.everyP95} ms`]: {
            value: `${round(paced.every.p95)} ms`,
            met: paced.every.p95 <= TARGET.everyP95,
          },
          ['delta INSERTs <= 1 per 100 ms per streaming step (as before)']: {
            value: `${paced.deltaWrites + (fast?.deltaWrites ?? 0)}/${paced.deltaWritesAllowed + (fast?.deltaWritesAllowed ?? 0)}`,
            met: paced.deltaWrites + (fast?.deltaWrites ?? 0) <= paced.deltaWritesAllowed + (fast?.deltaWritesAllowed ?? 0),
          },
        },
        paced: figures(paced),
        fast: figures(fast),
      }),
    );
  } finally {
    for (const client of clients) client.close();
    await Promise.allSettled([stopProcess(api), stopProcess(worker)]);
    await admin.end().catch(() => undefined);
    await model.close();
    await services.stop();
    await fs.rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** utime + stime of a process, from Linux /proc (NaN elsewhere) */
const TICKS_PER_SECOND = 100;
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return NaN;
  }
}

const sum = <T>(items: T[], of: (item: T) => number) => items.reduce((total, item) => total + of(item), 0);
const rounded = (summary: Summary) =>
  Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, key === 'count' ? value : round(value)]));

async function counters(
  admin: pg.Pool,
  url: string,
  statements: boolean,
): Promise<{ wal: number; transactions: number; statements: StatementSnapshot | undefined }> {
  const { rows } = await admin.query<{ wal: string; transactions: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal,
            (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::text AS transactions`,
  );
  return {
    wal: Number(rows[0]!.wal),
    transactions: Number(rows[0]!.transactions),
    statements: statements ? await statementSnapshot(url) : undefined,
  };
}

function statementCalls(before: StatementSnapshot | undefined, after: StatementSnapshot | undefined, pattern: RegExp): number {
  if (!after) return NaN;
  let calls = 0;
  for (const [id, use] of after) if (pattern.test(use.query)) calls += use.calls - (before?.get(id)?.calls ?? 0);
  return calls;
}

/** Transactions that wrote a step's delta rows, less the one that also wrote its final message (the tail). */
async function deltaWrites(admin: pg.Pool, messageIds: string[]): Promise<{ total: number; rows: number; byStep: Map<string, number> }> {
  const { rows } = await admin.query<{ step: string; writes: number; rows: number }>(
    `WITH d AS (
       SELECT d.data->>'messageId' AS step, d.xmin::text AS tx,
              EXISTS (SELECT FROM events m WHERE m.conversation_id = d.conversation_id AND m.type = 'message' AND m.xmin::text = d.xmin::text) AS final
         FROM events d
        WHERE d.type = 'message.delta' AND d.data->>'messageId' = ANY($1))
     SELECT step, count(DISTINCT tx) FILTER (WHERE NOT final)::int AS writes, count(*)::int AS rows FROM d GROUP BY step`,
    [messageIds],
  );
  return {
    total: sum(rows, (row) => row.writes),
    rows: sum(rows, (row) => row.rows),
    byStep: new Map(rows.map((row) => [row.step, row.writes])),
  };
}

await main();
