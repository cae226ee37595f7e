// What every drill stands on: the cluster shape (src/stack/cluster.ts) in a temp dir on free ports, with the
// real @google/genai client in each worker talking to a scriptable Gemini-compatible server (the same fake the
// tests use), a client that retries as a well-behaved API client does, and SQL to count what was written.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import type { ManagedProcess } from '../src/stack/cluster-process.ts';
import { startCluster, type Cluster } from '../src/stack/cluster.ts';
import { endsWithToolResults, lastContent, reply, startFakeGemini, type FakeGemini, type FakeReply, type RecordedRequest } from '../test/support/fake-gemini.ts';

export const DRILL_TOKEN = 'drill-token-support-000000000000';

export interface CallResult {
  status: number;
  body: any;
  headers: Headers;
}

export interface DrillCluster {
  cluster: Cluster;
  fake: FakeGemini;
  model: DrillModel;
  /** one HTTP request to the API; a network error is status 0 */
  call(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string> }): Promise<CallResult>;
  /**
   * A POST as a careful client sends it: with an Idempotency-Key, retried on 503, other 5xx and network
   * errors (the API down) until it gets an answer, so a retry never starts a second turn.
   */
  post(path: string, body: unknown, options?: { key?: string; timeoutMs?: number; onRetry?: (status: number, body: unknown) => void }): Promise<CallResult & { attempts: number }>;
  /** a query as the PostgreSQL superuser on Brigade's database */
  query<T = any>(sql: string, params?: unknown[]): Promise<T[]>;
  openConversation(title: string): Promise<string>;
  /**
   * The worker process that runs (or last ran) an activity of the workflow, from Temporal's record of its
   * identity (`pid@host`): what a drill kills to hit "the worker mid activity" rather than any worker.
   */
  workerRunningActivity(workflowId: string, activityType?: string): Promise<ManagedProcess | undefined>;
  waitUntilIdle(id: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A model that answers from what it is asked, so that many conversations can talk at once: "cancel order N"
 * and "status of order N" call the support tools, anything else is echoed, and after tool results it says
 * which tool answered for which user text. A drill can hold the call whose user text carries a marker.
 */
export interface DrillModel {
  /** the next model call whose last user text contains `marker` waits until release() */
  hold(marker: string): { reached: Promise<RecordedRequest>; release(): void };
}

export function userTextOf(request: RecordedRequest): string {
  for (const content of [...(request.body.contents ?? [])].reverse()) {
    const parts = content.parts ?? [];
    if (parts.some((part) => part.functionResponse !== undefined)) continue;
    const text = parts.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
    if (text) return text;
  }
  return '';
}

function answer(request: RecordedRequest): FakeReply {
  const text = userTextOf(request);
  if (endsWithToolResults(request)) {
    const names = (lastContent(request)?.parts ?? []).map((part) => part.functionResponse?.name).filter(Boolean);
    return reply.text(`answered ${names.join(',')} for: ${text}`);
  }
  const cancel = /cancel order (\d+)/.exec(text);
  if (cancel) return reply.calls({ name: 'cancel_order', args: { order_id: cancel[1] } });
  const status = /status of order (\d+)/.exec(text);
  if (status) return reply.calls({ name: 'get_order_by_id', args: { order_id: status[1] } });
  return reply.text(`echo: ${text}`);
}

function drillModel(fake: FakeGemini): DrillModel {
  const armed = new Map<string, (then: FakeReply) => FakeReply>();
  fake.scriptFn((request) => {
    const base = answer(request);
    if (endsWithToolResults(request)) return base;
    const text = userTextOf(request);
    for (const [marker, arm] of armed) {
      if (text.includes(marker)) {
        armed.delete(marker);
        return arm(base);
      }
    }
    return base;
  });
  return {
    hold(marker) {
      let reach!: (request: RecordedRequest) => void;
      const reached = new Promise<RecordedRequest>((resolve) => (reach = resolve));
      let released = false;
      let held: ReturnType<typeof reply.hold> | undefined;
      armed.set(marker, (then) => {
        held = reply.hold(then);
        held.reached.then(reach);
        if (released) held.release();
        return held;
      });
      return {
        reached,
        release() {
          released = true;
          held?.release();
        },
      };
    },
  };
}

export async function startDrillCluster(opts: { workers?: number; log?: (line: string) => void; processLog?: (name: string, line: string) => void } = {}): Promise<DrillCluster> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-drill-'));
  // As root, PostgreSQL runs as the `postgres` user, who must be able to enter this directory.
  await fs.chmod(dataDir, 0o755);
  const fake = await startFakeGemini();
  const model = drillModel(fake);
  let cluster: Cluster;
  try {
    cluster = await startCluster({
      dataDir,
      workers: opts.workers ?? 2,
      ephemeral: true,
      log: opts.log,
      processLog: opts.processLog,
      env: {
        GEMINI_API_KEY: 'drill-key',
        GEMINI_BASE_URL: fake.baseUrl,
        // a model call on a worker that died is retried after this
        MODEL_TIMEOUT: '10s',
        API_TOKENS: JSON.stringify({ [DRILL_TOKEN]: { user: 'drill', roles: ['support'] } }),
        LOG_LEVEL: 'warn',
      },
    });
  } catch (error) {
    await fake.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const pool = new pg.Pool({ connectionString: cluster.postgres.url, max: 4 });
  pool.on('error', () => undefined);

  const call: DrillCluster['call'] = async (method, urlPath, { body, headers = {} } = {}) => {
    try {
      const response = await fetch(`${cluster.apiUrl}${urlPath}`, {
        method,
        headers: { authorization: `Bearer ${DRILL_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON
      }
      return { status: response.status, body: parsed, headers: response.headers };
    } catch (error) {
      return { status: 0, body: { error: (error as Error).message }, headers: new Headers() };
    }
  };

  const drill: DrillCluster = {
    cluster,
    fake,
    model,
    call,
    async post(urlPath, body, { key = crypto.randomUUID(), timeoutMs = 120_000, onRetry } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (let attempts = 1; ; attempts++) {
        const result = await call('POST', urlPath, { body, headers: { 'Idempotency-Key': key } });
        const retryable = result.status === 0 || result.status >= 500;
        if (!retryable || Date.now() > deadline) return { ...result, attempts };
        onRetry?.(result.status, result.body);
        // Retry-After says 5 s; a drill wants to see the recovery sooner, so it asks every 250 ms.
        await sleep(250);
      }
    },
    async query(sql, params = []) {
      return (await pool.query(sql, params)).rows;
    },
    async openConversation(title) {
      const created = await drill.post('/v1/conversations', { agent: 'support', title });
      if (created.status !== 201) throw new Error(`POST /v1/conversations answered ${created.status}: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    },
    async workerRunningActivity(workflowId, activityType) {
      const connection = await Connection.connect({ address: cluster.temporalAddress });
      try {
        const client = new Client({ connection, namespace: cluster.namespace });
        const description = await client.workflow.getHandle(workflowId).describe();
        const pending = (description.raw.pendingActivities ?? []).filter((activity) => !activityType || activity.activityType?.name === activityType);
        const identity = pending.find((activity) => activity.lastWorkerIdentity)?.lastWorkerIdentity ?? '';
        const pid = Number(identity.split('@')[0]);
        return cluster.workers.find((worker) => worker.pid === pid);
      } finally {
        await connection.close();
      }
    },
    async waitUntilIdle(id, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const view = await call('GET', `/v1/conversations/${id}`);
        if (view.status === 200 && view.body.status === 'idle') return;
        if (Date.now() > deadline) throw new Error(`conversation ${id} is not idle after ${timeoutMs / 1000} s (last: ${view.status} ${JSON.stringify(view.body).slice(0, 200)})`);
        await sleep(100);
      }
    },
    async stop() {
      await pool.end().catch(() => undefined);
      await cluster.stop();
      await fake.close();
      await fs.rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
  return drill;
}

/** Rows a conversation wrote, by kind: what "nothing lost, nothing done twice" is checked against. */
export async function countsOf(drill: DrillCluster, conversationId: string): Promise<Record<string, number>> {
  const [row] = await drill.query(
    `SELECT
       (SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'user')::int AS "user",
       (SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'assistant')::int AS assistant,
       (SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'tool')::int AS tool,
       (SELECT count(*) FROM tool_calls WHERE conversation_id = $1)::int AS "toolCalls",
       (SELECT count(*) FROM model_usage WHERE conversation_id = $1)::int AS "modelCalls"`,
    [conversationId],
  );
  return row;
}

/** Differences between what was expected and what is there, as "lost" (fewer) and "doubled" (more). */
export function compareCounts(label: string, expected: Record<string, number>, actual: Record<string, number>): { lost: string[]; doubled: string[] } {
  const lost: string[] = [];
  const doubled: string[] = [];
  for (const [kind, want] of Object.entries(expected)) {
    const have = actual[kind] ?? 0;
    if (have < want) lost.push(`${label}: ${kind} ${have}/${want}`);
    if (have > want) doubled.push(`${label}: ${kind} ${have}/${want}`);
  }
  return { lost, doubled };
}
