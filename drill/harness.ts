// What every drill stands on: the cluster shape (stack/cluster.ts) in a temp dir on free ports, with the
// real @google/genai client in each worker talking to a scriptable Gemini-compatible server (the same fake the
// tests use), a client that retries as a well-behaved API client does, and SQL to count what was written.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import pg from 'pg';
import type { ManagedProcess } from '../stack/cluster-process.ts';
import { startCluster, type Cluster } from '../stack/cluster.ts';
import { loadConfig } from '../src/config.ts';
import { dataConverter, withDevPayloadKey } from '../src/protection/data-converter.ts';
import { placeholderPng } from '../src/agents/recipes/offline-save.ts';
import { chatSessionWorkflowId } from '../src/shared/definitions.ts';
import {
  endsWithToolResults,
  lastContent,
  reply,
  startFakeGemini,
  type FakeGemini,
  type FakeReply,
  type RecordedRequest,
} from '../test/support/fake-gemini.ts';
import { startFakeOpenBreweryDb, type FakeOpenBreweryDb } from '../test/support/fake-openbrewerydb.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

export const DRILL_TOKEN = 'drill-token-support-000000000000';

export interface CallResult {
  status: number;
  body: any;
  headers: Headers;
}

/** A history event as drills read it: when (ms since the epoch), what, and which worker (`pid@host`) did it. */
export interface HistoryEvent {
  eventId: number;
  at: number;
  /** WorkflowTaskCompleted, ActivityTaskStarted, TimerFired, ... */
  type: string;
  identity?: string;
  /** an activity's: its attempt (ActivityTaskStarted) */
  attempt?: number;
  /** an activity's type, on its scheduled, started, completed and failed events */
  activityType?: string;
}

/** EVENT_TYPE_WORKFLOW_TASK_COMPLETED (7) -> WorkflowTaskCompleted */
const EVENT_TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(proto.temporal.api.enums.v1.EventType).map(([name, value]) => [
    value,
    name
      .replace(/^EVENT_TYPE_/, '')
      .toLowerCase()
      .replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase()),
  ]),
);

export interface DrillCluster {
  cluster: Cluster;
  fake: FakeGemini;
  model: DrillModel;
  /** the local OpenBreweryDB over the fixture that the workers' beer agent searches */
  breweries: FakeOpenBreweryDb;
  /** DATA_DIR of the workers and the API (one for all: the local object store is under it) */
  appDataDir: string;
  /** one HTTP request to the API; a network error is status 0 */
  call(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string> }): Promise<CallResult>;
  /**
   * A POST as a careful client sends it: with an Idempotency-Key, retried on 503, other 5xx and network
   * errors (the API down) until it gets an answer, so a retry never starts a second turn.
   */
  post(
    path: string,
    body: unknown,
    options?: { key?: string; timeoutMs?: number; onRetry?: (status: number, body: unknown) => void },
  ): Promise<CallResult & { attempts: number }>;
  /** a query as the PostgreSQL superuser on Brigade's database */
  query<T = any>(sql: string, params?: unknown[]): Promise<T[]>;
  /** a support conversation unless `agent` says otherwise; a beer conversation names its `client` */
  openConversation(title: string, options?: { agent?: string; client?: string }): Promise<string>;
  /** a conversation's workflow ID */
  workflowIdOf(conversationId: string): string;
  /** the cluster's worker process whose Temporal identity (`pid@host`) this is */
  workerOf(identity: string | undefined): ManagedProcess | undefined;
  /** the worker process that completed the workflow's last workflow task: where it last ran */
  workerLastRunning(workflowId: string): Promise<ManagedProcess | undefined>;
  /** the workflow's history, flattened to what drills check */
  history(workflowId: string): Promise<HistoryEvent[]>;
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
 * and "status of order N" call the support tools, "save this recipe: ..." calls save_recipe, "recommend
 * breweries" calls recommend_breweries, anything else is echoed, and after tool results it says which tool
 * answered for which user text. It also answers the save pipeline's task calls (structuring, image prompt,
 * image) and the beer agent's grounded summaries. A drill can hold the call whose user text carries a marker.
 */
export interface DrillModel {
  /** the next model call of `kind` (default chat) whose last user text contains `marker` waits until release() */
  hold(marker: string, kind?: ModelCallKind): { reached: Promise<RecordedRequest>; release(): void };
}

export type ModelCallKind = 'chat' | 'structure' | 'image_prompt' | 'image' | 'grounding';

/** Which of Brigade's model calls a request is, from how the SDK sends it. */
export function kindOf(request: RecordedRequest): ModelCallKind {
  if (request.model.includes('image')) return 'image';
  if (request.stream) return 'chat';
  if (request.body.generationConfig?.responseJsonSchema) return 'structure';
  const tools = (request.body.tools ?? []) as Record<string, unknown>[];
  if (tools.some((tool) => tool.googleSearch !== undefined)) return 'grounding';
  return 'image_prompt';
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

/** The recipe between the prompt's last <recipe> markers (the instructions before them name the markers too). */
function recipeIn(text: string): string {
  const start = text.lastIndexOf('<recipe>');
  const end = text.lastIndexOf('</recipe>');
  return start >= 0 && end > start ? text.slice(start + '<recipe>'.length, end).trim() : text;
}

function answer(request: RecordedRequest): FakeReply {
  const text = userTextOf(request);
  switch (kindOf(request)) {
    case 'structure': {
      // "Name. Ingredients: ..." -> the name; the rest is fixed: the drills check where a recipe goes, not its parsing
      const name = recipeIn(text).split('.')[0]!.trim() || 'Drill recipe';
      return reply.text(
        JSON.stringify({
          name,
          recipe_type: 'cocktail',
          ingredients: [{ name: 'bourbon', quantity: '2', unit: 'oz', notes: null }],
          instructions: ['Stir with ice', 'Strain'],
          prep_time: 5,
          cook_time: null,
          servings: 1,
          source_references: [],
          notes: null,
          tags: ['drill'],
        }),
      );
    }
    case 'image_prompt': {
      const name = /"name":\s*"([^"]*)"/.exec(recipeIn(text))?.[1] ?? 'a drink';
      return reply.text(`A photograph of ${name} on a bar top.`);
    }
    case 'image':
      return reply.image(placeholderPng(text));
    case 'grounding':
      return reply.grounded('A brewery with a taproom.', ['brewery taproom'], [{ uri: 'https://example.com/brewery' }]);
    case 'chat':
      break;
  }
  if (endsWithToolResults(request)) {
    const names = (lastContent(request)?.parts ?? []).map((part) => part.functionResponse?.name).filter(Boolean);
    return reply.text(`answered ${names.join(',')} for: ${text}`);
  }
  const cancel = /cancel order (\d+)/.exec(text);
  if (cancel) return reply.calls({ name: 'cancel_order', args: { order_id: cancel[1] } });
  const status = /status of order (\d+)/.exec(text);
  if (status) return reply.calls({ name: 'get_order_by_id', args: { order_id: status[1] } });
  const save = /save this recipe: ([\s\S]+)/.exec(text);
  if (save) return reply.calls({ name: 'save_recipe', args: { raw_recipe_data: save[1]!.trim() } });
  if (/recommend breweries/i.test(text)) return reply.calls({ name: 'recommend_breweries', args: {} });
  return reply.text(`echo: ${text}`);
}

function drillModel(fake: FakeGemini): DrillModel {
  const armed = new Map<string, { marker: string; kind: ModelCallKind; arm: (then: FakeReply) => FakeReply }>();
  fake.scriptFn((request) => {
    const base = answer(request);
    const kind = kindOf(request);
    if (kind === 'chat' && endsWithToolResults(request)) return base;
    const text = userTextOf(request);
    for (const [key, { marker, kind: armedKind, arm }] of armed) {
      if (armedKind === kind && text.includes(marker)) {
        armed.delete(key);
        return arm(base);
      }
    }
    return base;
  });
  return {
    hold(marker, kind = 'chat') {
      let reach!: (request: RecordedRequest) => void;
      const reached = new Promise<RecordedRequest>((resolve) => (reach = resolve));
      let released = false;
      let held: ReturnType<typeof reply.hold> | undefined;
      armed.set(`${kind}:${marker}`, {
        marker,
        kind,
        arm: (then) => {
          held = reply.hold(then);
          held.reached.then(reach);
          if (released) held.release();
          return held;
        },
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

export async function startDrillCluster(
  opts: {
    workers?: number;
    log?: (line: string) => void;
    processLog?: (name: string, line: string) => void;
    env?: Record<string, string>;
  } = {},
): Promise<DrillCluster> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-drill-'));
  // As root, PostgreSQL runs as the `postgres` user, who must be able to enter this directory.
  await fs.chmod(dataDir, 0o755);
  const fake = await startFakeGemini();
  const model = drillModel(fake);
  const breweries = await startFakeOpenBreweryDb();
  let cluster: Cluster;
  try {
    cluster = await startCluster({
      catalog: builtInCatalog(),
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
        OPENBREWERYDB_BASE_URL: breweries.baseUrl,
        // BEER_CONFIRMATION_TIMEOUT is left at its 30 s: drill 4 holds the cluster to it.
        // beer-staff: a token without a client may open a beer conversation naming one (drill 4)
        API_TOKENS: JSON.stringify({ [DRILL_TOKEN]: { user: 'drill', roles: ['support', 'beer-staff'] } }),
        // one user drives every drill: the per-user limits are not what a drill measures
        USER_EVENT_STREAMS: '0',
        USER_NEW_CONVERSATIONS_PER_MINUTE: '0',
        USER_TURNS_PER_MINUTE: '0',
        USER_REQUESTS_PER_MINUTE: '0',
        USER_CONCURRENT_REQUESTS: '0',
        LOG_LEVEL: 'warn',
        ...opts.env,
      },
    });
  } catch (error) {
    await fake.close();
    await breweries.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const pool = new pg.Pool({ connectionString: cluster.postgres.url, max: 4 });
  pool.on('error', () => undefined);

  const call: DrillCluster['call'] = async (method, urlPath, { body, headers = {} } = {}) => {
    try {
      const response = await fetch(`${cluster.apiUrl}${urlPath}`, {
        method,
        headers: {
          authorization: `Bearer ${DRILL_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
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

  const withClient = async <T>(fn: (client: Client) => Promise<T>): Promise<T> => {
    const connection = await Connection.connect({ address: cluster.temporalAddress });
    try {
      // the cluster's processes seal payloads with the key it keeps for its app data dir, a person's under their data key
      const converter = dataConverter(await withDevPayloadKey(loadConfig({}), path.join(dataDir, 'app')), pool);
      return await fn(new Client({ connection, namespace: cluster.namespace, dataConverter: converter }));
    } finally {
      await connection.close();
    }
  };
  const workerOf = (identity: string | undefined) => {
    const pid = Number((identity ?? '').split('@')[0]);
    return pid ? cluster.workers.find((worker) => worker.pid === pid) : undefined;
  };

  const drill: DrillCluster = {
    cluster,
    fake,
    model,
    breweries,
    appDataDir: path.join(dataDir, 'app'),
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
    async openConversation(title, { agent = 'support', client } = {}) {
      const created = await drill.post('/v1/conversations', { agent, title, ...(client ? { client } : {}) });
      if (created.status !== 201) throw new Error(`POST /v1/conversations answered ${created.status}: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    },
    workflowIdOf: chatSessionWorkflowId,
    workerOf,
    async workerRunningActivity(workflowId, activityType) {
      return withClient(async (client) => {
        const description = await client.workflow.getHandle(workflowId).describe();
        const pending = (description.raw.pendingActivities ?? []).filter(
          (activity) => !activityType || activity.activityType?.name === activityType,
        );
        return workerOf(pending.find((activity) => activity.lastWorkerIdentity)?.lastWorkerIdentity ?? undefined);
      });
    },
    async workerLastRunning(workflowId) {
      const completed = (await drill.history(workflowId)).filter((event) => event.type === 'WorkflowTaskCompleted');
      return workerOf(completed.at(-1)?.identity);
    },
    async history(workflowId) {
      return withClient(async (client) => {
        const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
        const activityTypes = new Map<number, string>();
        return events.map((event): HistoryEvent => {
          const started = event.activityTaskStartedEventAttributes;
          const scheduled = event.activityTaskScheduledEventAttributes;
          if (scheduled?.activityType?.name) activityTypes.set(Number(event.eventId), scheduled.activityType.name);
          const scheduledId =
            started?.scheduledEventId ??
            event.activityTaskCompletedEventAttributes?.scheduledEventId ??
            event.activityTaskFailedEventAttributes?.scheduledEventId;
          const activityType = scheduled?.activityType?.name ?? (scheduledId ? activityTypes.get(Number(scheduledId)) : undefined);
          const identity =
            event.workflowTaskCompletedEventAttributes?.identity ??
            event.workflowTaskStartedEventAttributes?.identity ??
            started?.identity ??
            event.activityTaskCompletedEventAttributes?.identity ??
            event.activityTaskFailedEventAttributes?.identity ??
            undefined;
          const seconds = Number(event.eventTime?.seconds ?? 0);
          const nanos = event.eventTime?.nanos ?? 0;
          return {
            eventId: Number(event.eventId ?? 0),
            at: seconds * 1000 + nanos / 1e6,
            type: EVENT_TYPE_NAMES[event.eventType ?? 0] ?? String(event.eventType),
            ...(identity ? { identity } : {}),
            ...(started?.attempt ? { attempt: started.attempt } : {}),
            ...(activityType ? { activityType } : {}),
          };
        });
      });
    },
    async waitUntilIdle(id, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const view = await call('GET', `/v1/conversations/${id}`);
        if (view.status === 200 && view.body.status === 'idle') return;
        if (Date.now() > deadline)
          throw new Error(
            `conversation ${id} is not idle after ${timeoutMs / 1000} s (last: ${view.status} ${JSON.stringify(view.body).slice(0, 200)})`,
          );
        await sleep(100);
      }
    },
    async stop() {
      await pool.end().catch(() => undefined);
      await cluster.stop();
      await fake.close();
      await breweries.close();
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
export function compareCounts(
  label: string,
  expected: Record<string, number>,
  actual: Record<string, number>,
): { lost: string[]; doubled: string[] } {
  const lost: string[] = [];
  const doubled: string[] = [];
  for (const [kind, want] of Object.entries(expected)) {
    const have = actual[kind] ?? 0;
    if (have < want) lost.push(`${label}: ${kind} ${have}/${want}`);
    if (have > want) doubled.push(`${label}: ${kind} ${have}/${want}`);
  }
  return { lost, doubled };
}
