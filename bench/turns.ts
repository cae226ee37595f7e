// `npm run bench`: what a turn costs on Temporal. Starts its own services (bench/services.ts), an in-process
// worker with the offline model, and drives chatSession workflows through @temporalio/client as the API does,
// without HTTP. Prints aligned text, then one JSON line for machines. Settings (env, with defaults):
//   BENCH_CONVERSATIONS=50   concurrent conversations
//   BENCH_TURNS=5            measured turns per conversation, per kind of turn and per run
//   BENCH_WARMUP=2           unmeasured turns per conversation first
//   BENCH_APPROVALS=3        approval cycles per conversation
//   BENCH_RATE=auto          offered load of the paced runs, in turns (updates) per second; auto = half the
//                            closed loop's capacity; 0 skips them
//   BENCH_LONG_TURNS=50      turns of the one long conversation (history growth)
//   BENCH_ROUNDS=3           rounds; each runs the closed loops of Brigade, the floor, the local-activity floor,
//                            bare-turn, the ai-sdk peer and the in-process step one after the other (each round starting with the next side),
//                            then their lone turns interleaved; the figures that judge are the medians of
//                            the rounds' ratios (about 40 s a round)
//   BENCH_LONE_TURNS=10      lone turns of each side per round
//   BENCH_PG_POOL=20         the worker's PostgreSQL pool size (npm start's, WORKER_POOL_SIZE)
//   BENCH_TIMEOUT_S=1800     hard limit for the whole run (a run takes about 3 min on 2 cores, 3 rounds; twice that under load)
//   BENCH_WORKER_OPTIONS='{"maxConcurrentActivityTaskPolls":4}'  extra Worker.create options (the bench then
//                            builds the worker itself, with the same activities, instead of calling createWorker)
//   BENCH_DATABASE_URL, BENCH_TEMPORAL_ADDRESS, BENCH_TEMPORAL_DYNAMIC_CONFIG, BENCH_WORKFLOWS_PATH,
//   BENCH_TEMPORAL_MEMORY=1 (the dev server in memory instead of as npm start runs it): see services.ts
//   BENCH_MODEL=gemini-wire  the model: @google/genai against a zero-latency Gemini-wire server in a process of
//                            its own (bench/gemini-wire.ts), streaming as with Gemini; `offline` = the offline model
//   BENCH_BASELINES=1        the bare-Temporal floor (its step as an activity, and as a local activity), bare-turn
//                            (the local floor running the in-process step) and the ai-sdk peer on the same server
//                            (bench/peers.ts); 0 skips
//   BENCH_PEER=1             the ai-sdk peer among the baselines (half of a round's time); 0 leaves it out
//   BENCH_PAYLOAD_ENCRYPTION=on  off runs without the payload codec, to measure what it costs
//   BENCH_PG_TCP=0           1 reaches the embedded PostgreSQL over loopback TCP instead of its Unix socket
//   BENCH_MEMORY_ROW=1       Brigade and the floor again on an in-memory dev server, as an extra row; 0 skips
//
// Two ways to load: closed loop (every conversation sends its next turn the moment the last one returns: the
// most turns/s the stack can do, with latency = concurrency / throughput) and paced (turns start on a fixed
// schedule adding up to BENCH_RATE per second: the latency a user sees at that load). Latency targets are
// judged on the paced runs, throughput on the closed loop.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { asyncLocalStorage, Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions as TemporalWorkerOptions } from '@temporalio/worker';
import pg from 'pg';
import { createActivities } from '../src/activities/index.ts';
import type protoModule from '@temporalio/proto';
import type { RuntimeActivities } from '../src/activities/runtime-types.ts';
import { sessionSettings } from '../src/api/session-settings.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { insertConversation } from '../src/db/conversations.ts';
import { asUser, createPool } from '../src/db/pool.ts';
import { withClient } from '../src/db/with-client.ts';
import { createOfflineModel } from '../src/model/offline.ts';
import { systemPrompts } from '../src/model/prompts.ts';
import { CHAT_SESSION_TASK_TIMEOUT, chatSessionWorkflowId, decideUpdate, sendMessageUpdate } from '../src/shared/definitions.ts';
import type { AgentName, ChatMessage, ChatSessionInput, JsonObject, TurnResult } from '../src/shared/messages.ts';
import { AGENT_KEY, USER_KEY, WAITING_KEY } from '../src/shared/search-attributes.ts';
import { installTemporalRuntime } from '../stack/temporal-runtime.ts';
import { WORKER_POOL_SIZE, createWorker } from '../stack/worker.ts';
import type { ChatSession } from '../src/workflows/chat-session.ts';
import { cpuBetween, cpuProbe, type CpuSnapshot, type CpuUse } from './cpu.ts';
import { startClusterServices } from './cluster-services.ts';
import { compareShapes } from './compare-shapes.ts';
import { enableStatementStats, statementSnapshot, statementsBetween, type StatementUse } from './pg-statements.ts';
import { startServices, type BenchServices } from './services.ts';
import { startGeminiWire, type GeminiWire } from './gemini-wire.ts';
import { ToolResultWatch } from './tool-result-watch.ts';
import { startAiSdkPeer, startBareTurn, startFloor, type Baseline } from './peers.ts';
import { createGeminiModel } from '../src/model/gemini.ts';
import type { ChatModel } from '../src/model/types.ts';
import {
  countActivities,
  historyPerTurn,
  meanPhases,
  phasesOf,
  round,
  sizeOf,
  splitByUpdate,
  summarise,
  type Phases,
  type Summary,
  type TurnSlice,
} from './stats.ts';
import { BENCH_PAYLOAD_ENV } from './payload-key.ts';
import { COUNT_ROWS, type Counts, countsBetween, countsNow, installCounters } from './turn-counts.ts';
import {
  type Limit,
  limitOf,
  localLimitOf,
  median,
  medianOf,
  type Ratios,
  ratiosOf,
  type RoundFigures,
  SIDES,
  type SideName,
} from './limit.ts';
import { dataConverter } from '../src/protection/data-converter.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

/** the agents the bench's worker serves (a composition root) */
const CATALOG = builtInCatalog();

// ---- settings ---------------------------------------------------------------------------------

function intSetting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function parseWorkerOptions(raw: string | undefined): Partial<TemporalWorkerOptions> | undefined {
  if (!raw) return undefined;
  const parsed = JSON.parse(raw) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('BENCH_WORKER_OPTIONS must be a JSON object');
  return parsed as Partial<TemporalWorkerOptions>;
}

const CONVERSATIONS = intSetting('BENCH_CONVERSATIONS', 50, 1, 500);
const TURNS = intSetting('BENCH_TURNS', 5, 1, 100);
const WARMUP = intSetting('BENCH_WARMUP', 2, 0, 20);
const APPROVALS = intSetting('BENCH_APPROVALS', 3, 1, 50);
/** undefined: half the measured capacity */
const RATE = (process.env.BENCH_RATE ?? 'auto') === 'auto' ? undefined : intSetting('BENCH_RATE', 0, 0, 10_000);
const LONG_TURNS = intSetting('BENCH_LONG_TURNS', 50, 5, 200);
const PG_POOL = intSetting('BENCH_PG_POOL', WORKER_POOL_SIZE, 1, 200);
const TIMEOUT_S = intSetting('BENCH_TIMEOUT_S', 1800, 10, 7200);
const WORKER_OPTIONS = parseWorkerOptions(process.env.BENCH_WORKER_OPTIONS);
const AGENT: AgentName = 'support';
const MODEL_KIND = process.env.BENCH_MODEL ?? 'gemini-wire';
if (MODEL_KIND !== 'gemini-wire' && MODEL_KIND !== 'offline') throw new Error('BENCH_MODEL must be gemini-wire or offline');
const BASELINES = process.env.BENCH_BASELINES !== '0';
/** the peer takes half a round: a lever's A/B against the limit can leave it out */
const PEER = process.env.BENCH_PEER !== '0';
const MEMORY_ROW = process.env.BENCH_MEMORY_ROW !== '0';
const ROUNDS = intSetting('BENCH_ROUNDS', 3, 1, 50);
const LONE_PER_ROUND = intSetting('BENCH_LONE_TURNS', 10, 1, 100);
/** as the workflow does by default (INLINE_TOOLS), so both sides run the same activity code */
const INLINE = process.env.INLINE_TOOLS !== 'false';
/** activities a lookup turn shows in its history (a local activity counts as one), to tell turns apart */
const LOOKUP_ACTIVITIES = INLINE ? 1 : 3;
/** `--shape=cluster`: one run against the cluster shape (`--cluster` runs both shapes and compares them) */
const CLUSTER_SHAPE = process.argv.includes('--shape=cluster');
/** conversations whose histories are read for the time breakdown */
const SAMPLE = 5;

// Issue 12's targets; the latency targets of the first bench (issue 3) are printed beside them.
const TARGETS = { aloneRatio: 3, turnsPerSecond: 120, cpuMsPerLookup: 17, approvalP50Ms: 40, bytesDriftPct: 10 };
// Issue 19's: ratios to the bare-Temporal floor and to the ai-sdk peer, measured on the same server in the same run.
const RATIOS = { floorCapacity: 0.8, floorCpu: 1.25, floorLone: 1.5, peerCapacity: 1.5, peerLone: 1 };
const EARLIER = { p50Ms: 25, p99Ms: 100 };
// Issue 33's: ratios to the limit (the floor plus the in-process step) and to the peer, medians over the rounds;
// reported since issue 49, whose targets judge against the local limit (the local-activity floor + the step).
const LIMIT_TARGETS = { cpu: 1.15, lone: 1.15, peerCapacity: 2.5 };
const LOCAL_TARGETS = { cpu: 1.1, lone: 1.1, peerCapacity: 3, approvalP50Ms: 25 };

// Turns from the offline model's phrasebook (src/model/offline-intents.ts).
const ORDER_IDS = ['24601', '13579', '97531', '86420', '54321', '19283', '74651', '30298', '47652', '61984', '58243', '90357', '28164'];
const CUSTOMER_IDS = ['1213210', '2837622', '3924156', '4782901', '5190753', '6824095', '7135680', '8259147', '9603481', '1057426'];
const lookupText = (n: number) => `status of order ${ORDER_IDS[n % ORDER_IDS.length]}`;
const CHAT_TEXT = 'hello';
/** A phone change always succeeds (cancel_order succeeds once per order), so every approval runs the same work. */
const phoneText = (conversation: number, cycle: number) =>
  `update ${CUSTOMER_IDS[conversation % CUSTOMER_IDS.length]} phone 555-${String(100 + (cycle % 900))}-${String((conversation * 97 + cycle) % 10_000).padStart(4, '0')}`;

type HistoryEvent = protoModule.temporal.api.history.v1.IHistoryEvent;

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
const debug = process.env.BENCH_DEBUG ? (line: string) => process.stderr.write(`  ${line}\n`) : () => undefined;

// ---- lifecycle --------------------------------------------------------------------------------

const stops: { name: string; stop: () => Promise<unknown> }[] = [];
let stopping: Promise<void> | undefined;

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const { name, stop } of stops.reverse()) {
      try {
        debug(`stopping ${name}`);
        await stop();
      } catch (error) {
        progress(`stopping ${name} failed: ${(error as Error).message}`);
      }
    }
  })();
  return stopping;
}

const hardLimit = setTimeout(() => {
  progress(`the run took longer than BENCH_TIMEOUT_S=${TIMEOUT_S} s; stopping`);
  void stopAll().finally(() => process.exit(2));
}, TIMEOUT_S * 1000);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping`);
    void stopAll().finally(() => process.exit(130));
  });
}

let readCpu: () => CpuSnapshot | undefined = () => undefined;
/** Brigade's database, once pg_stat_statements is on: runs count their statements (turn-counts.ts) */
let countsDatabase: string | undefined;
installCounters();

// Heartbeats the worker's activities ask for (the first of an attempt reaches the server at once, then one per
// throttle interval): a model step beats every STOP_HEARTBEAT_MS, so a step slowed by a saturated machine adds
// server work per turn that the floor's no-op activity never does.
let heartbeats = 0;
const counted = new WeakSet<Context>();
const currentContext = Context.current.bind(Context);
// heartbeat is an instance field of each activity's Context: wrap it where activities get their context
Context.current = () => {
  const context = currentContext();
  if (!counted.has(context)) {
    counted.add(context);
    const beat = context.heartbeat;
    (context as { heartbeat: Context['heartbeat'] }).heartbeat = (details?: unknown) => {
      heartbeats += 1;
      beat(details);
    };
  }
  return context;
};

// ---- load -------------------------------------------------------------------------------------

interface Run {
  latencies: number[];
  /** the same latencies by the conversation's position, to match them with sampled histories */
  byPosition: number[][];
  wallMs: number;
  /** wall-clock bounds, to pick this run's turns out of histories */
  startedAt: number;
  endedAt: number;
  cpu?: CpuUse;
  /** per turn (turn-counts.ts) */
  counts?: Counts;
  rate?: number;
}

/**
 * Every conversation runs `turns` turns one after another; the conversations run at once. With a rate, turn n
 * of the i-th conversation starts no earlier than (n * conversations + i) / rate seconds after the start, so
 * starts are spread evenly; a conversation that falls behind goes on at once.
 */
async function runConcurrently<C>(
  conversations: C[],
  turns: number,
  turn: (conversation: C, n: number) => Promise<number | undefined>,
  rate?: number,
): Promise<Run> {
  const latencies: number[] = [];
  const byPosition: number[][] = conversations.map(() => []);
  const countsBefore = await countsNow(countsDatabase);
  const cpuBefore = readCpu();
  const startedAt = Date.now();
  const started = performance.now();
  await Promise.all(
    conversations.map(async (conversation, position) => {
      for (let n = 0; n < turns; n += 1) {
        if (rate) {
          const wait = started + ((n * conversations.length + position) / rate) * 1000 - performance.now();
          if (wait > 0) await sleep(wait);
        }
        const ms = await turn(conversation, n);
        if (ms !== undefined) {
          latencies.push(ms);
          byPosition[position]!.push(ms);
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  const endedAt = Date.now();
  const cpu = cpuBetween(cpuBefore, readCpu());
  const counts = countsBetween(countsBefore, await countsNow(countsDatabase), latencies.length);
  return { latencies, byPosition, wallMs, startedAt, endedAt, cpu, counts, rate };
}

/** CPU ms per turn of a run, whole stack (this process, the Temporal server, PostgreSQL) */
const cpuPerTurn = (run: Run | undefined) =>
  run?.cpu ? (Object.values(run.cpu.groups).reduce((a, b) => a + b, 0) / 100) * (run.wallMs / run.latencies.length) : NaN;

/** CPU ms per turn of each process group, or of each thread kind of this process, in a run */
const cpuPerTurnBy = (run: Run | undefined, by: 'groups' | 'threads'): Record<string, number> =>
  run?.cpu
    ? Object.fromEntries(Object.entries(run.cpu[by]).map(([name, pct]) => [name, (pct / 100) * (run.wallMs / run.latencies.length)]))
    : {};

const perSecond = (run: Run, countPerSample = 1) => ((run.latencies.length * countPerSample) / run.wallMs) * 1000;

class Tally {
  /** messages the updates returned: each must be in the transcript exactly once */
  returned = 0;
  unexpected = 0;
  errors = 0;
  firstProblem: string | undefined;
  note(problem: string, isError: boolean) {
    if (isError) this.errors += 1;
    else this.unexpected += 1;
    this.firstProblem ??= problem;
  }
}

// ---- conversations on Temporal ------------------------------------------------------------------

interface Conversation {
  index: number;
  id: string;
  userId: string;
  handle: WorkflowHandle<ChatSession>;
}

/** Inserts the row and starts the workflow as POST /conversations does (activities write rows that reference it). */
async function openConversation(deps: { client: Client; pool: pg.Pool; config: Config }, index: number): Promise<Conversation> {
  const { client, pool, config } = deps;
  const id = randomUUID();
  const userId = `bench-user-${index}`;
  const workflowId = chatSessionWorkflowId(id);
  const title = `bench conversation ${index}`;
  const input: ChatSessionInput = { conversationId: id, userId, agent: AGENT, title, settings: sessionSettings(config, CATALOG) };
  await asUser(pool, userId, async (db) => {
    await insertConversation(db, { id, userId, agent: AGENT, client: null, title, workflowId });
    await client.workflow.start<ChatSession>('chatSession', {
      workflowId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      workflowTaskTimeout: CHAT_SESSION_TASK_TIMEOUT,
      typedSearchAttributes: [
        { key: AGENT_KEY, value: AGENT },
        { key: USER_KEY, value: userId },
        { key: WAITING_KEY, value: false },
      ],
      memo: { title },
      staticSummary: `${AGENT}: ${title}`,
    });
  });
  return { index, id, userId, handle: client.workflow.getHandle(workflowId) as WorkflowHandle<ChatSession> };
}

type TurnKind = 'lookup' | 'chat';

/** Messages a turn returns: user, call, tool result, answer; or user, answer. */
const EXPECTED_MESSAGES: Record<TurnKind, number> = { lookup: 4, chat: 2 };

async function timedTurn(conversation: Conversation, kind: TurnKind, text: string, tally: Tally): Promise<number | undefined> {
  const started = performance.now();
  try {
    const result = await conversation.handle.executeUpdate(sendMessageUpdate, { args: [{ text }] });
    const elapsed = performance.now() - started;
    tally.returned += result.messages.length;
    if (result.messages.length !== EXPECTED_MESSAGES[kind] || result.pending.length !== 0) {
      tally.note(`${kind} turn "${text}" returned ${result.messages.length} message(s), ${result.pending.length} pending`, false);
    }
    return elapsed;
  } catch (error) {
    tally.note(`${kind} turn "${text}": ${(error as Error).message}`, true);
    return undefined;
  }
}

interface ApprovalRun extends Run {
  parkLatencies: number[];
  /** decision sent -> the tool's result committed (as an SSE client is woken for it) */
  toolResultLatencies: number[];
}

/** Each cycle: a contact update parks on its approval (timed), then "approve" runs it (timed: approval-to-result). */
async function approvalCycles(
  conversations: Conversation[],
  cycles: number,
  tally: Tally,
  watch: ToolResultWatch,
  rate?: number,
): Promise<ApprovalRun> {
  const parkLatencies: number[] = [];
  const toolResultLatencies: number[] = [];
  const run = await runConcurrently(
    conversations,
    cycles,
    async (conversation, cycle) => {
      const text = phoneText(conversation.index, cycle);
      let parked: TurnResult;
      const sent = performance.now();
      try {
        parked = await conversation.handle.executeUpdate(sendMessageUpdate, { args: [{ text }] });
      } catch (error) {
        tally.note(`approval turn "${text}": ${(error as Error).message}`, true);
        return undefined;
      }
      parkLatencies.push(performance.now() - sent);
      tally.returned += parked.messages.length;
      const pending = parked.pending[0];
      if (!pending) {
        tally.note(`approval turn "${text}" did not park (${parked.messages.length} message(s))`, false);
        return undefined;
      }
      const toolResult = watch.next(conversation.id, `tool-result:${pending.callId}`);
      const decided = performance.now();
      try {
        const result = await conversation.handle.executeUpdate(decideUpdate, { args: [{ pendingId: pending.id, decision: 'approve' }] });
        const elapsed = performance.now() - decided;
        toolResultLatencies.push((await toolResult) - decided);
        tally.returned += result.messages.length;
        const tool = result.messages.find((message) => message.role === 'tool');
        if (!tool || result.pending.length !== 0 || (tool.result as { error?: unknown } | undefined)?.error) {
          tally.note(`approve of "${text}" returned ${JSON.stringify(result).slice(0, 300)}`, false);
        }
        return elapsed;
      } catch (error) {
        tally.note(`approve of "${text}": ${(error as Error).message}`, true);
        return undefined;
      }
    },
    rate,
  );
  return { ...run, parkLatencies, toolResultLatencies };
}

// ---- closed loops, and the baselines beside Brigade ------------------------------------------------

interface ClosedRuns {
  lookupClosed: Run;
  chatClosed: Run;
  /** turns/s over both closed loops */
  capacity: number;
}

/** A closed loop of lookup turns, then one of chat-only turns, on the same conversations. */
async function closedLoops<C>(
  conversations: C[],
  lookup: (conversation: C, n: number) => Promise<number | undefined>,
  chat: (conversation: C, n: number) => Promise<number | undefined>,
  between?: (lookupClosed: Run) => Promise<void>,
): Promise<ClosedRuns> {
  const lookupClosed = await runConcurrently(conversations, TURNS, lookup);
  await between?.(lookupClosed);
  const chatClosed = await runConcurrently(conversations, TURNS, chat);
  const capacity = ((lookupClosed.latencies.length + chatClosed.latencies.length) / (lookupClosed.wallMs + chatClosed.wallMs)) * 1000;
  return { lookupClosed, chatClosed, capacity };
}

interface BaselineSide {
  baseline: Baseline;
  /** one round's closed loops on its conversations (lookup-shaped, then chat-shaped) */
  closed(round: number): Promise<ClosedRuns>;
  /** one turn of its conversation alone, to interleave with Brigade's */
  loneTurn(n: number): Promise<number | undefined>;
  /** the history of that conversation */
  loneHistory(): Promise<HistoryEvent[]>;
}

/** Runs a baseline's worker, opens its conversations and warms them up, as Brigade's are. */
async function prepareBaseline(baseline: Baseline, tally: Tally): Promise<BaselineSide> {
  baseline.run();
  const handles = await baseline.open(CONVERSATIONS);
  const [solo] = await baseline.open(1);
  const turn = (handle: WorkflowHandle, text: string) =>
    baseline.turn(handle, text).catch((error: unknown) => {
      tally.note(`${baseline.name} turn "${text}": ${(error as Error).message}`, true);
      return undefined;
    });
  if (WARMUP > 0) await runConcurrently(handles, WARMUP, (h, n) => turn(h, n % 2 === 0 ? lookupText(n) : CHAT_TEXT));
  await turn(solo!, lookupText(0));
  return {
    baseline,
    closed: (round) =>
      closedLoops(
        handles,
        (h, n) => turn(h, lookupText(round * TURNS + n)),
        (h) => turn(h, CHAT_TEXT),
      ),
    loneTurn: (n) => turn(solo!, lookupText(n)),
    loneHistory: async () => (await solo!.fetchHistory()).events ?? [],
  };
}

// ---- the same turns without Temporal ----------------------------------------------------------------

// The activities read their context (heartbeats, the cancellation signal, info such as the heartbeat timeout):
// give them a quiet one shaped like a first attempt of an activity with the workflow's model options.
const fakeActivityContext = {
  info: { attempt: 1, heartbeatTimeoutMs: 10_000, startToCloseTimeoutMs: 60_000, isLocal: false, activityType: 'bench' },
  heartbeat: () => undefined,
  cancellationSignal: new AbortController().signal,
  cancelled: new Promise<never>(() => undefined),
  log: { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
} as unknown as Context;
const inActivity = <T>(fn: () => Promise<T>) => asyncLocalStorage.run(fakeActivityContext, fn);

interface BareConversation {
  index: number;
  id: string;
  userId: string;
}

interface ActivityTimes {
  modelStep: number[];
  runTool: number[];
}

/** What chatSession's runTurn does for a turn without approvals, calling the activities' functions directly. */
async function inProcessTurn(
  activities: RuntimeActivities,
  conversation: BareConversation,
  kind: TurnKind,
  text: string,
  times: ActivityTimes,
  tally: Tally,
): Promise<number | undefined> {
  const started = performance.now();
  const { id: conversationId, userId } = conversation;
  try {
    let unsaved: ChatMessage[] = [{ id: randomUUID(), role: 'user', text }];
    let produced = 1;
    for (let step = 1; step <= 8; step += 1) {
      const stepStarted = performance.now();
      const { message, before = [] } = await inActivity(() =>
        activities.modelStep({
          conversationId,
          userId,
          agent: AGENT,
          stepId: randomUUID(),
          messages: unsaved,
          events: [],
          ...(INLINE ? { inline: { extraSteps: 8 - step } } : {}),
        }),
      );
      times.modelStep.push(performance.now() - stepStarted);
      unsaved = [];
      produced += 1 + before.length;
      const calls = message.toolCalls ?? [];
      if (!calls.length) break;
      for (const call of calls) {
        const spec = CATALOG.findTool(AGENT, call.name);
        const parsed = spec?.args.safeParse(call.args);
        if (!spec || !parsed?.success || spec.policy.approval) throw new Error(`unexpected call ${call.name}`);
        const toolStarted = performance.now();
        await inActivity(() =>
          activities.runTool({ conversationId, userId, agent: AGENT, callId: call.id, tool: call.name, args: parsed.data as JsonObject }),
        );
        times.runTool.push(performance.now() - toolStarted);
        produced += 1;
      }
    }
    const elapsed = performance.now() - started;
    if (produced !== EXPECTED_MESSAGES[kind]) tally.note(`in-process ${kind} turn produced ${produced} message(s)`, false);
    return elapsed;
  } catch (error) {
    tally.note(`in-process ${kind} turn "${text}": ${(error as Error).message}`, true);
    return undefined;
  }
}

/** bare-turn's conversations are numbered from here, apart from the in-process side's */
const BARE_TURN_INDEX = 10_000;

async function insertBareConversation(pool: pg.Pool, index: number): Promise<BareConversation> {
  const id = randomUUID();
  const userId = `bench-inproc-${index}`;
  await asUser(pool, userId, (db) =>
    insertConversation(db, { id, userId, agent: AGENT, client: null, title: `in-process ${index}`, workflowId: `bench-inprocess-${id}` }),
  );
  return { index, id, userId };
}

/** A count as the login that owns the schema, past row-level security. */
function countAsOwner(url: string, sql: string, params: unknown[]): Promise<number> {
  return withClient(url, async (client) => Number((await client.query(sql, params)).rows[0]?.count));
}

// ---- report -----------------------------------------------------------------------------------------

const fmt = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
const pad = (text: string, width: number) => text.padStart(width);
const padEnd = (text: string, width: number) => text.padEnd(width);
const meanOf = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

const LABEL = 40;
/** a column of the side-by-side table ('floor-local' and a space) */
const SIDE_WIDTH = 12;
const LATENCY_HEADER = [
  padEnd('', LABEL),
  pad('n', 5),
  pad('p50', 8),
  pad('p95', 8),
  pad('p99', 8),
  pad('mean', 8),
  pad('max', 8),
  pad('turns/s', 9),
].join('');
function latencyRow(label: string, summary: Summary, rate?: number): string {
  return [
    padEnd(`  ${label}`, LABEL),
    pad(String(summary.count), 5),
    ...[summary.p50, summary.p95, summary.p99, summary.mean, summary.max].map((value) => pad(fmt(value), 8)),
    pad(rate === undefined ? '' : fmt(rate), 9),
  ].join('');
}

const PHASES_HEADER = [
  padEnd('', LABEL),
  pad('n', 5),
  pad('client', 8),
  pad('server', 8),
  pad('WFTs', 5),
  pad('wftQ', 7),
  pad('wftRun', 7),
  pad('acts', 5),
  pad('actQ', 7),
  pad('actRun', 7),
  pad('rpc/etc', 8),
].join('');
function phasesRow(label: string, slices: TurnSlice[], client?: number): string {
  const phases: Phases | undefined = meanPhases(slices.map(phasesOf));
  if (!phases) return `  ${padEnd(label, LABEL - 2)}(no turns to analyse)`;
  return [
    padEnd(`  ${label}`, LABEL),
    pad(String(slices.length), 5),
    pad(fmt(client), 8),
    pad(fmt(phases.span), 8),
    pad(`${fmt(phases.workflowTasks, 0)}x`, 5),
    pad(fmt(phases.wftQueue), 7),
    pad(fmt(phases.wftRun), 7),
    pad(`${fmt(phases.activities, 0)}x`, 5),
    pad(fmt(phases.actQueue), 7),
    pad(fmt(phases.actRun), 7),
    pad(client === undefined ? '-' : fmt(client - phases.span), 8),
  ].join('');
}

function cpuLines(label: string, run: Run | undefined, samplesPerTurn = 1): string[] {
  const cpu = run?.cpu;
  if (!run || !cpu) return [`  ${padEnd(label, LABEL - 2)}(no /proc)`];
  const turns = run.latencies.length * samplesPerTurn;
  const msPerTurn = (pct: number) => (pct / 100) * (run.wallMs / turns);
  const ours = Object.values(cpu.groups).reduce((a, b) => a + b, 0);
  const groups = Object.entries(cpu.groups)
    .sort(([, a], [, b]) => b - a)
    .map(([name, value]) => `${name} ${fmt(value, 0)}% = ${fmt(msPerTurn(value))} ms/turn`)
    .join('; ');
  const threads = Object.entries(cpu.threads)
    .sort(([, a], [, b]) => b - a)
    .map(([name, value]) => `${name} ${fmt(value, 0)}%`)
    .join(', ');
  return [
    `  ${padEnd(label, LABEL - 2)}machine ${fmt(cpu.machine, 0)}% (others on the machine ${fmt(Math.max(0, cpu.machine - ours), 0)}%); ours ${fmt(msPerTurn(ours))} ms CPU/turn`,
    `  ${padEnd('', LABEL - 2)}${groups}`,
    `  ${padEnd('', LABEL - 2)}node threads: ${threads}`,
  ];
}

// ---- main -------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const runStarted = performance.now();
  progress(
    CLUSTER_SHAPE
      ? 'starting the cluster shape (PostgreSQL, Temporal server, worker processes)...'
      : 'starting PostgreSQL, the Temporal dev server and the workflow bundle...',
  );
  let wire: GeminiWire | undefined;
  if (MODEL_KIND === 'gemini-wire') {
    wire = await startGeminiWire();
    stops.push({ name: 'gemini-wire server', stop: () => wire!.stop() });
  }
  const modelEnv: Record<string, string> = wire
    ? { GEMINI_API_KEY: 'bench', GEMINI_BASE_URL: wire.baseUrl, GEMINI_MODEL: 'gemini-2.5-flash' }
    : {};
  const services: BenchServices = CLUSTER_SHAPE ? await startClusterServices(debug, modelEnv) : await startServices(debug);
  stops.push({ name: 'services', stop: () => services.stop() });
  progress(`services ready in ${(services.startupMs / 1000).toFixed(1)} s`);
  readCpu = cpuProbe(
    {
      temporal: Number(services.temporalAddress.split(':').at(-1)),
      postgres: Number(new URL(services.databaseUrl).port || 5432),
    },
    { processes: services.processes, selfLabel: services.taskQueue ? 'node (bench: client)' : undefined },
  );

  installTemporalRuntime('warn');
  const taskQueue = services.taskQueue ?? `bench-${process.pid}-${randomUUID().slice(0, 8)}`;
  const config = loadConfig(
    {
      DATABASE_URL: services.databaseUrl,
      TEMPORAL_ADDRESS: services.temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      LOG_LEVEL: 'warn',
      INLINE_TOOLS: String(INLINE),
      // BENCH_PAYLOAD_ENCRYPTION=off measures what the codec costs (production never runs without it)
      ...(process.env.BENCH_PAYLOAD_ENCRYPTION === 'off' ? { PAYLOAD_ENCRYPTION: 'off' } : BENCH_PAYLOAD_ENV),
      // one user stands for many: the per-user limits would measure themselves, not the runtime
      USER_EVENT_STREAMS: '0',
      USER_NEW_CONVERSATIONS_PER_MINUTE: '0',
      USER_TURNS_PER_MINUTE: '0',
      USER_REQUESTS_PER_MINUTE: '0',
      USER_CONCURRENT_REQUESTS: '0',
    },
    CATALOG,
  );
  const pool = createPool(services.databaseUrl, { max: PG_POOL });
  pool.on('error', (error) => void (stopping ? undefined : progress(`PostgreSQL connection lost: ${error.message}`)));
  stops.push({ name: 'pool', stop: () => pool.end() });

  const model: ChatModel = wire
    ? createGeminiModel({ apiKey: 'bench', baseUrl: wire.baseUrl, model: 'gemini-2.5-flash' })
    : createOfflineModel(CATALOG);
  // In the cluster shape the workers are processes of their own; here only the client runs.
  if (!services.taskQueue) {
    const nativeConnection = await NativeConnection.connect({ address: services.temporalAddress });
    stops.push({ name: 'worker connection', stop: () => nativeConnection.close() });
    const worker = WORKER_OPTIONS
      ? await Worker.create({
          connection: nativeConnection,
          namespace: config.TEMPORAL_NAMESPACE,
          taskQueue,
          workflowBundle: { codePath: services.bundlePath },
          dataConverter: dataConverter(config, pool),
          activities: createActivities({
            catalog: CATALOG,
            pool,
            model,
            systemPrompt: systemPrompts(CATALOG),
            implementations: CATALOG.toolImplementations(),
          }),
          ...WORKER_OPTIONS,
        })
      : await createWorker({
          catalog: CATALOG,
          config,
          connection: nativeConnection,
          pool,
          workflowBundlePath: services.bundlePath,
          model,
          taskQueue,
        });
    const running = worker.run();
    running.catch((error: unknown) => progress(`the worker failed: ${(error as Error).message}`));
    stops.push({
      name: 'worker',
      stop: async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
      },
    });
  }

  const connection = await Connection.connect({ address: services.temporalAddress });
  stops.push({ name: 'client connection', stop: () => connection.close() });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: dataConverter(config, pool) });
  const deps = { client, pool, config };
  const tally = new Tally();

  // The step's own work as the in-process side and bare-turn run it: Brigade's activities, called directly.
  const activities = createActivities({
    catalog: CATALOG,
    pool,
    model,
    systemPrompt: systemPrompts(CATALOG),
    implementations: CATALOG.toolImplementations(),
  });
  const ignored: ActivityTimes = { modelStep: [], runTool: [] };

  // The baselines' workers are built now (bundling is seconds of CPU) and run only in their phase.
  const baselines: Baseline[] = [];
  if (BASELINES) {
    progress('bundling the baselines (bare-Temporal floor, its local-activity twin, bare-turn, ai-sdk peer)...');
    // Their workers have the SDK's default data converter, as bare Temporal does: their client must too (Brigade's
    // encrypts, and a worker without the codec fails every Update).
    const baseClient = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
    const baseDeps = { client: baseClient, address: services.temporalAddress, namespace: config.TEMPORAL_NAMESPACE };
    baselines.push(await startFloor(baseDeps));
    baselines.push(await startFloor(baseDeps, true));
    // bare-turn's conversations: one in PostgreSQL per workflow, made at its first turn
    const bareTurnConversations = new Map<string, Promise<BareConversation>>();
    baselines.push(
      await startBareTurn(baseDeps, async (workflowId, text) => {
        let conversation = bareTurnConversations.get(workflowId);
        if (!conversation) {
          conversation = insertBareConversation(pool, BARE_TURN_INDEX + bareTurnConversations.size);
          bareTurnConversations.set(workflowId, conversation);
        }
        await inProcessTurn(activities, await conversation, text === CHAT_TEXT ? 'chat' : 'lookup', text, ignored, tally);
      }),
    );
    if (wire && PEER) baselines.push(await startAiSdkPeer({ ...baseDeps, pool, geminiBaseUrl: wire.baseUrl }));
    for (const baseline of baselines) stops.push({ name: `${baseline.name} worker`, stop: () => baseline.stop() });
  }

  progress(`opening ${CONVERSATIONS} conversations (+1 long one)...`);
  // A few at a time: 50 at once wait on a pool of 10 for longer than its connection timeout on a busy machine.
  const conversations: Conversation[] = [];
  for (let i = 0; i < CONVERSATIONS; i += PG_POOL) {
    conversations.push(
      ...(await Promise.all(Array.from({ length: Math.min(PG_POOL, CONVERSATIONS - i) }, (_, j) => openConversation(deps, i + j)))),
    );
  }
  const long = await openConversation(deps, CONVERSATIONS);

  if (WARMUP > 0) {
    progress(`warming up (${WARMUP} turns per conversation, not measured)...`);
    await runConcurrently(conversations, WARMUP, (c, n) =>
      n % 2 === 0 ? timedTurn(c, 'lookup', lookupText(n), tally) : timedTurn(c, 'chat', CHAT_TEXT, tally),
    );
  }

  progress('warming up the baselines and the in-process turns...');
  const baselineSides: BaselineSide[] = [];
  for (const baseline of baselines) baselineSides.push(await prepareBaseline(baseline, tally));
  const bare: BareConversation[] = [];
  for (let i = 0; i < CONVERSATIONS; i += PG_POOL) {
    bare.push(
      ...(await Promise.all(Array.from({ length: Math.min(PG_POOL, CONVERSATIONS - i) }, (_, j) => insertBareConversation(pool, i + j)))),
    );
  }
  await runConcurrently(bare, WARMUP, (c, n) =>
    inProcessTurn(activities, c, n % 2 === 0 ? 'lookup' : 'chat', n % 2 === 0 ? lookupText(n) : CHAT_TEXT, ignored, tally),
  );
  const lone = await openConversation(deps, CONVERSATIONS + 1);
  const bareSoloConversation = await insertBareConversation(pool, CONVERSATIONS);
  // each side's first lone turn is left out (its conversation's first)
  await timedTurn(lone, 'lookup', lookupText(0), tally);
  await inProcessTurn(activities, bareSoloConversation, 'lookup', lookupText(0), ignored, tally);

  // Rounds: each side's closed loops one after the other, then their lone turns interleaved (Brigade, floor,
  // ai-sdk, in-process, Brigade, ...), so that every side of a round sees the same load from the rest of the
  // machine. The figures that judge are each round's ratios' medians.
  const statsOn = await enableStatementStats(services.databaseUrl);
  if (statsOn) countsDatabase = services.databaseUrl;
  const rounds: RoundFigures[] = [];
  const heartbeatsPerLookup: number[] = [];
  const byside = (): Record<SideName, number[]> =>
    Object.fromEntries(SIDES.map((name) => [name, []])) as unknown as Record<SideName, number[]>;
  const loneLatencies = byside();
  const closedTimes: ActivityTimes = { modelStep: [], runTool: [] };
  const soloTimes: ActivityTimes = { modelStep: [], runTool: [] };
  let brigadeClosed: ClosedRuns | undefined;
  let bareClosed: ClosedRuns | undefined;
  let pgLookup: StatementUse[] = [];
  let pgBare: StatementUse[] = [];
  const pgBetween = (set: (used: StatementUse[]) => void) => {
    let before: Awaited<ReturnType<typeof statementSnapshot>> | undefined;
    return {
      start: async () => void (before = statsOn ? await statementSnapshot(services.databaseUrl) : undefined),
      stop: async (run: Run) =>
        set(statementsBetween(before, statsOn ? await statementSnapshot(services.databaseUrl) : undefined, run.latencies.length)),
    };
  };
  for (let round = 0; round < ROUNDS; round += 1) {
    const last = round === ROUNDS - 1;
    progress(
      `round ${round + 1}/${ROUNDS}: closed loops, each round starting with the next side (${CONVERSATIONS} conversations x ${TURNS} lookup turns, then x ${TURNS} chat-only) of ` +
        `${['Brigade', ...baselines.map((b) => b.name), 'in-process'].join(', ')}; then ${LONE_PER_ROUND} lone turns of each, interleaved...`,
    );
    const figures: RoundFigures = {};
    const closedOf: { name: SideName; run: () => Promise<ClosedRuns> }[] = [
      {
        name: 'Brigade',
        run: async () => {
          const pgBrigade = pgBetween((used) => (pgLookup = used));
          await pgBrigade.start();
          const heartbeatsBefore = heartbeats;
          brigadeClosed = await closedLoops(
            conversations,
            (c, n) => timedTurn(c, 'lookup', lookupText(c.index + round * TURNS + n), tally),
            (c) => timedTurn(c, 'chat', CHAT_TEXT, tally),
            async (run) => {
              heartbeatsPerLookup.push((heartbeats - heartbeatsBefore) / run.latencies.length);
              await pgBrigade.stop(run);
            },
          );
          return brigadeClosed;
        },
      },
      ...baselineSides.map((side) => ({ name: side.baseline.name, run: () => side.closed(round) })),
      {
        name: 'in-process',
        run: async () => {
          const pgInProcess = pgBetween((used) => (pgBare = used));
          await pgInProcess.start();
          bareClosed = await closedLoops(
            bare,
            (c, n) => inProcessTurn(activities, c, 'lookup', lookupText(c.index + round * TURNS + n), last ? closedTimes : ignored, tally),
            (c) => inProcessTurn(activities, c, 'chat', CHAT_TEXT, ignored, tally),
            pgInProcess.stop,
          );
          return bareClosed;
        },
      },
    ];
    // Each round starts with another side, so that no side always runs right after the same one.
    const sides: { name: SideName; runs: ClosedRuns }[] = [];
    for (let i = 0; i < closedOf.length; i += 1) {
      const { name, run } = closedOf[(i + round) % closedOf.length]!;
      sides.push({ name, runs: await run() });
    }
    const loneOfRound = byside();
    const keep = (name: SideName, ms: number | undefined) => {
      if (ms === undefined) return;
      loneOfRound[name].push(ms);
      loneLatencies[name].push(ms);
    };
    for (let n = 1; n <= LONE_PER_ROUND; n += 1) {
      const at = round * LONE_PER_ROUND + n;
      keep('Brigade', await timedTurn(lone, 'lookup', lookupText(at), tally));
      for (const side of baselineSides) keep(side.baseline.name, await side.loneTurn(at));
      keep('in-process', await inProcessTurn(activities, bareSoloConversation, 'lookup', lookupText(at), soloTimes, tally));
    }
    for (const { name, runs } of sides) {
      figures[name] = {
        capacity: runs.capacity,
        cpu: cpuPerTurn(runs.lookupClosed),
        groups: cpuPerTurnBy(runs.lookupClosed, 'groups'),
        threads: cpuPerTurnBy(runs.lookupClosed, 'threads'),
        lone: summarise(loneOfRound[name]).p50,
        closedP50: summarise(runs.lookupClosed.latencies).p50,
        counts: { ...(runs.lookupClosed.counts ?? {}) },
      };
    }
    rounds.push(figures);
    const ratios = ratiosOf(figures);
    if (ratios)
      progress(
        `round ${round + 1}: CPU/lookup turn ${fmt(figures.Brigade?.cpu)} ms = ${fmt(ratios.cpu, 2)}x the limit; lone turn ${fmt(figures.Brigade?.lone)} ms = ` +
          `${fmt(ratios.lone, 2)}x; capacity ${fmt(ratios.capacityToPeer, 2)}x the peer's, ${fmt(ratios.capacityToFloor, 2)}x the floor's; ` +
          `CPU ${fmt(ratios.toLocalFloor.cpu, 2)}x the local floor's (load average ${os.loadavg()[0]!.toFixed(1)})`,
      );
  }
  const { lookupClosed, chatClosed } = brigadeClosed!;
  const { lookupClosed: bareLookupClosed, chatClosed: bareChatClosed } = bareClosed!;
  const medians = medianOf(rounds)!;
  const medianRatios = medianOf(rounds.map(ratiosOf).filter((ratios): ratios is Ratios => ratios !== undefined));
  const medianLimit = medianOf(rounds.map(limitOf).filter((limit): limit is Limit => limit !== undefined));
  /** the judging limit since issue 49: the local-activity floor + the in-process step */
  const medianLocalLimit = medianOf(rounds.map(localLimitOf).filter((limit): limit is Limit => limit !== undefined));
  const capacity = medians.Brigade!.capacity;

  const paced = RATE === undefined ? Math.max(1, Math.round(capacity / 2)) : RATE > 0 ? RATE : undefined;
  let lookupPaced: Run | undefined;
  let chatPaced: Run | undefined;
  if (paced) {
    progress(`paced at ${paced} turns/s (half the median capacity): lookup, then chat-only...`);
    lookupPaced = await runConcurrently(conversations, TURNS, (c, n) => timedTurn(c, 'lookup', lookupText(c.index + n + 3), tally), paced);
    chatPaced = await runConcurrently(conversations, TURNS, (c) => timedTurn(c, 'chat', CHAT_TEXT, tally), paced);
  }
  progress(`approvals: ${CONVERSATIONS} conversations x ${APPROVALS} cycles${paced ? ` paced at ${paced} updates/s` : ''}...`);
  const watch = await ToolResultWatch.start(services.databaseUrl);
  stops.push({ name: 'tool result watch', stop: () => watch.stop() });
  const approvals = await approvalCycles(conversations, APPROVALS, tally, watch, paced ? paced / 2 : undefined);

  progress(`one long conversation: ${LONG_TURNS} lookup turns, one at a time (history growth)...`);
  const longRun = await runConcurrently([long], LONG_TURNS, (c, n) => timedTurn(c, 'lookup', lookupText(n), tally));
  const longEvents = (await long.handle.fetchHistory()).events ?? [];
  const longSlices = splitByUpdate(longEvents);
  const turnSize = (n: number) => {
    const slice = longSlices[n - 1];
    return slice ? { events: slice.events.length, ...sizeOf(slice.events) } : undefined;
  };
  const at5 = turnSize(5);
  const atLong = turnSize(LONG_TURNS);
  const totalSize = sizeOf(longEvents);
  const bytesRatio = at5 && atLong ? atLong.protoBytes / at5.protoBytes : NaN;

  // What a lone lookup turn leaves in each side's history (the first turn left out)
  const perTurn: Record<string, ReturnType<typeof historyPerTurn>> = {
    Brigade: historyPerTurn(splitByUpdate((await lone.handle.fetchHistory()).events ?? []).slice(1)),
  };
  for (const side of baselineSides) perTurn[side.baseline.name] = historyPerTurn(splitByUpdate(await side.loneHistory()).slice(1));

  progress('reading the histories of a sample of the concurrent conversations...');
  const sampleSlices: TurnSlice[] = [];
  for (const conversation of conversations.slice(0, SAMPLE)) {
    sampleSlices.push(...splitByUpdate((await conversation.handle.fetchHistory()).events ?? []));
  }
  const slicesOf = (run: Run | undefined, name: string, activities?: number) =>
    run
      ? sampleSlices.filter(
          (s) =>
            s.updateName === name &&
            (activities === undefined || countActivities(s) === activities) &&
            s.startMs >= run.startedAt - 5 &&
            s.endMs <= run.endedAt + 5,
        )
      : [];

  const pacedTimes: ActivityTimes = { modelStep: [], runTool: [] };
  const bareLookupPaced = paced
    ? await runConcurrently(
        bare,
        TURNS,
        (c, n) => inProcessTurn(activities, c, 'lookup', lookupText(c.index + n), pacedTimes, tally),
        paced,
      )
    : undefined;
  const loneRun = (name: SideName): Run => {
    const latencies = loneLatencies[name];
    return { latencies, byPosition: [latencies], wallMs: NaN, startedAt: 0, endedAt: 0 };
  };
  const brigadeLoneRun = loneRun('Brigade');
  const bareSolo = loneRun('in-process');

  // ---- figures ----
  const s = (run: Run | undefined) => summarise(run?.latencies ?? []);
  const withoutFirst = (run: Run): Run => ({ ...run, latencies: run.latencies.slice(1) });
  /** mean client latency of the sampled conversations in a run, to set against their histories */
  const sampledMean = (run: Run | undefined) => (run ? meanOf(run.byPosition.slice(0, SAMPLE).flat()) : undefined);
  const throughput = capacity;
  const lookupCpu = medians.Brigade!.cpu;
  // Exactly once: every message an update returned is in the transcript, and nothing else is.
  const written = await countAsOwner(
    services.databaseUrl,
    'SELECT count(*) AS count FROM messages WHERE conversation_id = ANY($1::uuid[])',
    [[...conversations, long, lone].map((c) => c.id)],
  );
  const latencyLookup = lookupPaced ?? lookupClosed;
  const latencyChat = chatPaced ?? chatClosed;
  const loadName = paced ? `paced at ${paced}/s` : 'closed loop';
  const ratio = (a: Run | undefined, b: Run | undefined) => s(a).p50 / s(b).p50;
  const aloneRatio = medians.Brigade!.lone / (medians['in-process']?.lone ?? NaN);

  const halfCapacity = paced ? `paced at ${paced}/s, half of capacity` : 'closed loop';
  const floorSide = medians.floor;
  const peerSide = medians['ai-sdk'];
  const localFloorSide = medians['floor-local'];
  /** Brigade / the local-activity floor, medians of the rounds' ratios */
  const localFloor = localFloorSide ? medianRatios?.toLocalFloor : undefined;
  const brigadeLone = medians.Brigade!.lone;
  const sides = SIDES.filter((name) => medians[name]).map((name) => ({ name, ...medians[name]! }));
  // a ratio to a side that spent nothing (PostgreSQL for the floors) is no figure
  const x = (value: number) => (Number.isFinite(value) ? `${fmt(value, 2)}x` : '-');
  const toolResultP50 = summarise(approvals.toolResultLatencies).p50;
  const roundRatios = rounds.map(ratiosOf).filter((ratios): ratios is Ratios => ratios !== undefined);
  /** a median with the rounds' spread: "1.08x (1.02-1.15)" */
  const spread = (value: number, of: (ratios: Ratios) => number) => {
    const all = roundRatios.map(of).filter((v) => Number.isFinite(v));
    return all.length > 1 ? `${x(value)} (${fmt(Math.min(...all), 2)}-${fmt(Math.max(...all), 2)})` : x(value);
  };
  const localLimitRatios = medianRatios && Number.isFinite(medianRatios.toLocalLimit.cpu) ? medianRatios : undefined;
  const targets = [
    ...(localLimitRatios
      ? [
          {
            name: `CPU per lookup turn <= ${LOCAL_TARGETS.cpu}x the limit (floor-local + in-process step; median)`,
            value: spread(localLimitRatios.toLocalLimit.cpu, (r) => r.toLocalLimit.cpu),
            met: localLimitRatios.toLocalLimit.cpu <= LOCAL_TARGETS.cpu,
          },
          {
            name: `lone lookup turn p50 <= ${LOCAL_TARGETS.lone}x the limit's (median)`,
            value: spread(localLimitRatios.toLocalLimit.lone, (r) => r.toLocalLimit.lone),
            met: localLimitRatios.toLocalLimit.lone <= LOCAL_TARGETS.lone,
          },
        ]
      : []),
    ...(medianRatios && peerSide
      ? [
          {
            name: `capacity >= ${LOCAL_TARGETS.peerCapacity}x the ai-sdk peer's (closed loop, lookup + chat; median)`,
            value: spread(medianRatios.capacityToPeer, (r) => r.capacityToPeer),
            met: medianRatios.capacityToPeer >= LOCAL_TARGETS.peerCapacity,
          },
        ]
      : []),
    {
      name: `approval -> tool result p50 <= ${LOCAL_TARGETS.approvalP50Ms} ms (${halfCapacity})`,
      value: `${fmt(toolResultP50)} ms`,
      met: toolResultP50 <= LOCAL_TARGETS.approvalP50Ms,
    },
    {
      name: `history flat: bytes/turn at turn ${LONG_TURNS} within ${TARGETS.bytesDriftPct}% of turn 5`,
      value: `${bytesRatio >= 1 ? '+' : ''}${fmt((bytesRatio - 1) * 100)} %`,
      met: Math.abs(bytesRatio - 1) * 100 <= TARGETS.bytesDriftPct,
    },
    {
      name: 'exactly once: transcript rows = messages the turns returned',
      value: `${written}/${tally.returned}`,
      met: written === tally.returned && tally.errors === 0,
    },
  ];
  const earlier = [
    ...(medianRatios && medianLimit
      ? [
          {
            name: `CPU per lookup turn <= ${LIMIT_TARGETS.cpu}x the regular limit (floor + in-process step; median)`,
            value: spread(medianRatios.cpu, (r) => r.cpu),
            met: medianRatios.cpu <= LIMIT_TARGETS.cpu,
          },
          {
            name: `lone lookup turn p50 <= ${LIMIT_TARGETS.lone}x the regular limit's (median)`,
            value: spread(medianRatios.lone, (r) => r.lone),
            met: medianRatios.lone <= LIMIT_TARGETS.lone,
          },
        ]
      : []),
    ...(medianRatios && peerSide
      ? [
          {
            name: `capacity >= ${LIMIT_TARGETS.peerCapacity}x the ai-sdk peer's (issue 33)`,
            value: x(medianRatios.capacityToPeer),
            met: medianRatios.capacityToPeer >= LIMIT_TARGETS.peerCapacity,
          },
        ]
      : []),
    {
      name: `approval -> tool result p50 <= ${TARGETS.approvalP50Ms} ms (${halfCapacity})`,
      value: `${fmt(toolResultP50)} ms`,
      met: toolResultP50 <= TARGETS.approvalP50Ms,
    },
    ...(floorSide && medianRatios
      ? [
          {
            name: `capacity >= ${RATIOS.floorCapacity}x floor (closed loop, lookup + chat)`,
            value: x(medianRatios.capacityToFloor),
            met: medianRatios.capacityToFloor >= RATIOS.floorCapacity,
          },
          {
            name: `CPU per lookup turn <= ${RATIOS.floorCpu}x floor's per turn (whole stack)`,
            value: x(median(rounds.map((round) => round.Brigade!.cpu / (round.floor?.cpu ?? NaN)))),
            met: median(rounds.map((round) => round.Brigade!.cpu / (round.floor?.cpu ?? NaN))) <= RATIOS.floorCpu,
          },
          {
            name: `lone lookup turn p50 <= ${RATIOS.floorLone}x floor's lone turn`,
            value: x(median(rounds.map((round) => round.Brigade!.lone / (round.floor?.lone ?? NaN)))),
            met: median(rounds.map((round) => round.Brigade!.lone / (round.floor?.lone ?? NaN))) <= RATIOS.floorLone,
          },
        ]
      : []),
    ...(peerSide && medianRatios
      ? [
          {
            name: `capacity >= ${RATIOS.peerCapacity}x ai-sdk peer's (closed loop, lookup + chat)`,
            value: x(medianRatios.capacityToPeer),
            met: medianRatios.capacityToPeer >= RATIOS.peerCapacity,
          },
          {
            name: `lone lookup turn p50 <= ${RATIOS.peerLone}x ai-sdk peer's`,
            value: x(brigadeLone / peerSide.lone),
            met: brigadeLone / peerSide.lone <= RATIOS.peerLone,
          },
        ]
      : []),
    {
      name: `lone lookup turn <= ${TARGETS.aloneRatio}x in-process (p50)`,
      value: `${fmt(aloneRatio, 2)}x`,
      met: aloneRatio <= TARGETS.aloneRatio,
    },
    {
      name: `>= ${TARGETS.turnsPerSecond} turns/s (closed loop, lookup + chat)`,
      value: `${fmt(throughput)} /s`,
      met: throughput >= TARGETS.turnsPerSecond,
    },
    {
      name: `<= ${TARGETS.cpuMsPerLookup} ms CPU per lookup turn (whole stack)`,
      value: `${fmt(lookupCpu)} ms`,
      met: lookupCpu <= TARGETS.cpuMsPerLookup,
    },
    {
      name: `lookup turn p50 <= ${EARLIER.p50Ms} ms (${loadName})`,
      value: `${fmt(s(latencyLookup).p50)} ms`,
      met: s(latencyLookup).p50 <= EARLIER.p50Ms,
    },
    {
      name: `lookup turn p99 <= ${EARLIER.p99Ms} ms (${loadName})`,
      value: `${fmt(s(latencyLookup).p99)} ms`,
      met: s(latencyLookup).p99 <= EARLIER.p99Ms,
    },
    {
      name: `chat-only turn p50 <= ${EARLIER.p50Ms} ms (${loadName})`,
      value: `${fmt(s(latencyChat).p50)} ms`,
      met: s(latencyChat).p50 <= EARLIER.p50Ms,
    },
    {
      name: `chat-only turn p99 <= ${EARLIER.p99Ms} ms (${loadName})`,
      value: `${fmt(s(latencyChat).p99)} ms`,
      met: s(latencyChat).p99 <= EARLIER.p99Ms,
    },
  ];
  // Issue 43: printed beside the targets, not judged (no target measured as stable yet)
  const reported = localFloor
    ? [
        { name: "CPU per lookup turn / the local-activity floor's (whole stack; median)", value: x(localFloor.cpu) },
        { name: "capacity / the local-activity floor's (closed loop, lookup + chat; median)", value: x(localFloor.capacity) },
        { name: "lone lookup turn p50 / the local-activity floor's (median)", value: x(localFloor.lone) },
        {
          name: 'CPU per lookup turn / the local limit (floor-local + in-process; median)',
          value: x(medianRatios!.toLocalLimit.cpu),
        },
        { name: "lone lookup turn p50 / the local limit's (median)", value: x(medianRatios!.toLocalLimit.lone) },
        { name: "the local-activity floor's CPU per lookup turn / the floor's (median)", value: x(medianRatios!.localFloorToFloor.cpu) },
        { name: "the local-activity floor's capacity / the floor's (median)", value: x(medianRatios!.localFloorToFloor.capacity) },
        { name: "the local-activity floor's lone turn p50 / the floor's (median)", value: x(medianRatios!.localFloorToFloor.lone) },
      ]
    : [];
  // The local limit run as one program: whether a target on the sum is within reach of any program of this shape.
  if (medians['bare-turn'] && medianRatios)
    reported.push(
      { name: "CPU per lookup turn / bare-turn's (the local limit as one program; median)", value: x(medianRatios.toBareTurn.cpu) },
      { name: "lone lookup turn p50 / bare-turn's (median)", value: x(medianRatios.toBareTurn.lone) },
      { name: "capacity / bare-turn's (closed loop, lookup + chat; median)", value: x(medianRatios.toBareTurn.capacity) },
      ...(peerSide
        ? [
            {
              name: "bare-turn's capacity / the ai-sdk peer's: this shape built plainly",
              value: x(medianRatios.bareTurnCapacityToPeer),
            },
          ]
        : []),
    );

  // Where each millisecond above the limit goes (issue 49): Brigade minus the local limit, per process and per
  // thread of the bench's process, each the median of the rounds' differences; then what a turn does, counted.
  const overLocal = rounds.flatMap((round) => {
    const local = localLimitOf(round);
    return local && round.Brigade ? [{ brigade: round.Brigade, local }] : [];
  });
  type CpuFigures = Pick<Limit, 'cpu' | 'groups' | 'threads'>;
  const excess = (of: (figures: CpuFigures) => number) => {
    const all = overLocal.map(({ brigade, local }) => (of(brigade) || 0) - (of(local) || 0));
    return { median: median(all), min: Math.min(...all), max: Math.max(...all) };
  };
  const aboveLimitLines: string[] = [];
  const aboveLimit: Record<string, { median: number; min: number; max: number }> = {};
  if (overLocal.length) {
    aboveLimitLines.push(
      "Where Brigade's CPU above the limit goes (ms per lookup turn: Brigade - (floor-local + in-process); median of the rounds, [min, max])",
    );
    const names: [string, (f: CpuFigures) => number][] = [
      ['whole stack', (f) => f.cpu],
      ...[...new Set(overLocal.flatMap(({ brigade }) => Object.keys(brigade.groups)))]
        .sort()
        .map((group): [string, (f: CpuFigures) => number] => [group, (f) => f.groups[group] ?? 0]),
      ...[...new Set(overLocal.flatMap(({ brigade }) => Object.keys(brigade.threads)))]
        .sort()
        .map((thread): [string, (f: CpuFigures) => number] => [`  node thread: ${thread}`, (f) => f.threads[thread] ?? 0]),
    ];
    for (const [name, of] of names) {
      const e = excess(of);
      aboveLimit[name.trim()] = e;
      aboveLimitLines.push(`  ${padEnd(name, 42)}${pad(fmt(e.median, 2), 8)}  [${fmt(e.min, 2)}, ${fmt(e.max, 2)}]`);
    }
  }
  const countLines: string[] = [];
  const countSides = sides.filter((side) => side.counts && Object.keys(side.counts).length);
  if (countSides.length) {
    countLines.push(
      `Counts per lookup turn, closed loop (medians of the rounds; this process's codec, workflow threads and GCs${CLUSTER_SHAPE ? ': the client only, the workers are processes of their own' : ''}; SQL from pg_stat_statements)`,
    );
    countLines.push([padEnd('', 44), ...countSides.map((side) => pad(side.name, SIDE_WIDTH)), pad('above limit', 12)].join(''));
    const local = countSides.find((side) => side.name === 'floor-local');
    const step = countSides.find((side) => side.name === 'in-process');
    const brigadeCounts = countSides.find((side) => side.name === 'Brigade');
    for (const [key, label, digits] of COUNT_ROWS) {
      const over = brigadeCounts ? (brigadeCounts.counts![key] ?? 0) - (local?.counts?.[key] ?? 0) - (step?.counts?.[key] ?? 0) : NaN;
      countLines.push(
        [
          padEnd(`  ${label}`, 44),
          ...countSides.map((side) => pad(fmt(side.counts![key], digits), SIDE_WIDTH)),
          pad(fmt(over, digits), 12),
        ].join(''),
      );
    }
  }

  const lines: string[] = [];
  const say = (line = '') => lines.push(line);
  say('Brigade turn benchmark');
  say(
    `  machine      ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, load average ${os
      .loadavg()
      .map((v) => v.toFixed(1))
      .join(' ')}`,
  );
  say(`  postgres     ${services.describe.postgres}; worker pool max ${PG_POOL}`);
  say(`  temporal     ${services.describe.temporal}`);
  say(
    `  worker       ${services.taskQueue ? `separate processes (${Object.values(services.processes ?? {}).filter((name) => name.startsWith('worker')).length}, npm run worker)` : 'in-process'}, ${MODEL_KIND === 'offline' ? 'offline model' : '@google/genai streaming from the Gemini-wire server (bench/gemini-wire.ts)'}, ${WORKER_OPTIONS ? `Worker.create + ${JSON.stringify(WORKER_OPTIONS)}` : 'createWorker() defaults'}${process.env.BENCH_WORKFLOWS_PATH ? `, workflows from ${process.env.BENCH_WORKFLOWS_PATH}` : ''}`,
  );
  say(`  load         ${CONVERSATIONS} conversations x ${TURNS} turns per kind and run, after ${WARMUP} warmup turns each (excluded)`);
  say(
    `  turns        lookup = "status of order N": model step, get_order_by_id, model step (${INLINE ? 'one activity that runs the tool itself, 2 workflow tasks' : '2 activities and a local one, 3 workflow tasks; INLINE_TOOLS=false'})`,
  );
  say(`               chat-only = "hello": one model step (1 activity, 2 workflow tasks)`);
  say(`               approval = "update <id> phone ...": parks on update_user_contact; approve runs the tool and a model step`);
  say(`  latency      ms from executeUpdate(sendMessage | decide) to its result, in the client; approve -> tool result: to the`);
  say(`               commit of the tool's result, when the brigade_events notification that wakes event streams arrives`);
  say(`  closed loop  each conversation sends its next turn when the last returns: max turns/s; latency = ${CONVERSATIONS} / throughput`);
  say(
    `  paced        turns start on a schedule adding up to ${paced ?? '-'} per second (a conversation that falls behind goes on at once)`,
  );
  say();
  say(`Temporal, ${CONVERSATIONS} concurrent conversations`);
  say(LATENCY_HEADER);
  say(latencyRow('lookup turn, closed loop', s(lookupClosed), perSecond(lookupClosed)));
  say(latencyRow('chat-only turn, closed loop', s(chatClosed), perSecond(chatClosed)));
  if (lookupPaced) say(latencyRow(`lookup turn, ${loadName}`, s(lookupPaced), perSecond(lookupPaced)));
  if (chatPaced) say(latencyRow(`chat-only turn, ${loadName}`, s(chatPaced), perSecond(chatPaced)));
  say(latencyRow(`approval: send -> parked, ${loadName}`, summarise(approvals.parkLatencies)));
  say(latencyRow(`approval: approve -> tool result, ${loadName}`, summarise(approvals.toolResultLatencies)));
  say(latencyRow(`approval: approve -> answer, ${loadName}`, s(approvals), perSecond(approvals, 2)));
  say(latencyRow(`lookup turn alone, interleaved (${ROUNDS} rounds)`, s(brigadeLoneRun)));
  say(latencyRow('lookup turn, the long conversation alone', s(withoutFirst(longRun)), perSecond(longRun)));
  say(`  turns/s over the closed-loop runs (lookup + chat-only): ${fmt(throughput)}`);
  say();
  say(`In-process, no Temporal (the activities' functions in the workflow's order, same PostgreSQL and pool)`);
  say(LATENCY_HEADER);
  say(latencyRow('lookup turn, closed loop', s(bareLookupClosed), perSecond(bareLookupClosed)));
  say(latencyRow('chat-only turn, closed loop', s(bareChatClosed), perSecond(bareChatClosed)));
  if (bareLookupPaced) say(latencyRow(`lookup turn, ${loadName}`, s(bareLookupPaced), perSecond(bareLookupPaced)));
  say(latencyRow(`lookup turn alone, interleaved (${ROUNDS} rounds)`, s(bareSolo)));
  say(
    `  activity function time, mean ms: modelStep ${fmt(meanOf(soloTimes.modelStep), 2)}, runTool ${fmt(meanOf(soloTimes.runTool), 2)} alone;` +
      ` ${fmt(meanOf(closedTimes.modelStep), 2)}, ${fmt(meanOf(closedTimes.runTool), 2)} closed loop` +
      (paced ? `; ${fmt(meanOf(pacedTimes.modelStep), 2)}, ${fmt(meanOf(pacedTimes.runTool), 2)} ${loadName}` : ''),
  );
  say();
  say('Overhead ratio, lookup turn p50 (Temporal / in-process)');
  say(
    `  1 conversation alone     ${fmt(ratio(brigadeLoneRun, bareSolo), 2)}x  (${fmt(s(brigadeLoneRun).p50)} / ${fmt(s(bareSolo).p50)} ms)`,
  );
  if (lookupPaced)
    say(
      `  ${padEnd(loadName, 24)} ${fmt(ratio(lookupPaced, bareLookupPaced), 2)}x  (${fmt(s(lookupPaced).p50)} / ${fmt(s(bareLookupPaced).p50)} ms)`,
    );
  say(
    `  closed loop              ${fmt(ratio(lookupClosed, bareLookupClosed), 2)}x  (${fmt(s(lookupClosed).p50)} / ${fmt(s(bareLookupClosed).p50)} ms)`,
  );
  say();
  say(
    `History of one long conversation (${LONG_TURNS} lookup turns; bytes = protobuf via temporal.api.history.v1.History.encode, json = proto3 JSON)`,
  );
  say(`  ${padEnd('turn', 8)}${pad('events', 8)}${pad('bytes', 9)}${pad('json', 9)}`);
  for (const [label, size] of [
    ['5', at5],
    [String(LONG_TURNS), atLong],
  ] as const) {
    say(
      `  ${padEnd(label, 8)}${pad(String(size?.events ?? '-'), 8)}${pad(String(size?.protoBytes ?? '-'), 9)}${pad(String(size?.jsonBytes ?? '-'), 9)}`,
    );
  }
  say(
    `  bytes/turn at turn ${LONG_TURNS} / at turn 5 = ${fmt(bytesRatio, 3)}; whole history ${longEvents.length} events, ${totalSize.protoBytes} bytes`,
  );
  say();
  say('What a lone lookup turn leaves in its history, mean per turn (payload bytes = what the data converter made)');
  say(`  ${padEnd('', 12)}${pad('events', 8)}${pad('WFTs', 6)}${pad('bytes', 9)}${pad('payload', 9)}`);
  for (const [name, used] of Object.entries(perTurn))
    say(
      `  ${padEnd(name, 12)}${pad(fmt(used.events, 1), 8)}${pad(fmt(used.workflowTasks, 1), 6)}${pad(fmt(used.protoBytes, 0), 9)}${pad(fmt(used.payloadBytes, 0), 9)}`,
    );
  say(
    `  model-step heartbeats per lookup turn, closed loop, by round: ${heartbeatsPerLookup.map((n) => fmt(n, 2)).join(', ')} (the floor's activity: none)`,
  );
  say();
  say(`Where a turn's time goes (ms, mean per turn; server side from the history's event times, ${SAMPLE} sampled conversations)`);
  say('  wftQ/actQ = task scheduled -> started (history transfer queue, matching, the poll); wftRun/actRun = started ->');
  say('  completed (dispatch to the worker, its work, the completion RPC); rpc/etc = client latency - server span');
  say(PHASES_HEADER);
  say(phasesRow('lookup, 1 conversation alone', longSlices.slice(1), meanOf(longRun.latencies.slice(1))));
  if (lookupPaced) say(phasesRow(`lookup, ${loadName}`, slicesOf(lookupPaced, 'sendMessage', LOOKUP_ACTIVITIES), sampledMean(lookupPaced)));
  if (chatPaced) say(phasesRow(`chat-only, ${loadName}`, slicesOf(chatPaced, 'sendMessage', 1), sampledMean(chatPaced)));
  say(phasesRow(`approve, ${loadName}`, slicesOf(approvals, 'decide'), sampledMean(approvals)));
  say(phasesRow('lookup, closed loop', slicesOf(lookupClosed, 'sendMessage', LOOKUP_ACTIVITIES), sampledMean(lookupClosed)));
  say();
  say('PostgreSQL per lookup turn, closed loop (pg_stat_statements; BENCH_PG_TOP=n lists the n busiest, > = inside a function)');
  for (const [label, used] of [
    ['Temporal', pgLookup],
    ['in-process', pgBare],
  ] as const) {
    // A function's time includes the statements it runs, which are counted again as nested: totals are top-level.
    const top = used.filter((u) => u.toplevel);
    const nested = used.filter((u) => !u.toplevel).reduce((sum, u) => sum + u.calls, 0);
    const total = top.reduce((sum, u) => ({ calls: sum.calls + u.calls, ms: sum.ms + u.ms }), { calls: 0, ms: 0 });
    say(
      `  ${padEnd(label, 12)}${fmt(total.calls, 1)} statements sent (round trips), ${fmt(nested, 1)} run inside functions, ${fmt(total.ms, 2)} ms executing`,
    );
    if (process.env.BENCH_PG_TOP) {
      for (const u of used.slice(0, Number(process.env.BENCH_PG_TOP))) {
        say(
          `      ${pad(fmt(u.calls, 2), 6)} ${pad(fmt(u.ms, 3), 7)} ms ${u.toplevel ? ' ' : '>'} ${u.query.replace(/\s+/g, ' ').slice(0, 110)}`,
        );
      }
    }
  }
  say();
  say(`CPU (% of one core; the machine has ${os.availableParallelism() * 100}%; ms/turn = CPU time per turn)`);
  for (const line of cpuLines('lookup, closed loop', lookupClosed)) say(line);
  const lookupShape = meanPhases(slicesOf(lookupClosed, 'sendMessage', LOOKUP_ACTIVITIES).map(phasesOf));
  const serverPct = lookupClosed.cpu?.groups['temporal server'];
  if (lookupShape && serverPct !== undefined) {
    const serverMs = (serverPct / 100) * (lookupClosed.wallMs / lookupClosed.latencies.length);
    say(
      `  ${padEnd('', LABEL - 2)}the dev server: ${fmt(serverMs)} ms per lookup turn of ${fmt(lookupShape.workflowTasks, 0)} workflow tasks and ` +
        `${fmt(lookupShape.activities, 0)} activity = ${fmt(serverMs / lookupShape.workflowTasks)} ms per workflow task (its activity included)`,
    );
  }
  for (const line of cpuLines('chat-only, closed loop', chatClosed)) say(line);
  if (lookupPaced) for (const line of cpuLines(`lookup, ${loadName}`, lookupPaced)) say(line);
  for (const line of cpuLines('lookup in-process, closed loop', bareLookupClosed)) say(line);
  say();
  if (sides.length > 1) {
    say(
      `Same server, same run, ${ROUNDS} rounds interleaved: Brigade beside the bare-Temporal floor${localFloorSide ? ' (its step as an activity and as a local activity)' : ''}${medians['bare-turn'] ? ', bare-turn' : ''}${peerSide ? ', the ai-sdk peer' : ''} and the same step in-process (medians over the rounds; ${CONVERSATIONS} conversations; bench/peers.ts)`,
    );
    say('  floor  = a workflow whose Update runs one no-op activity and returns (bench/workflows/floor.ts)');
    if (localFloorSide)
      say("  floor-local = the same with the no-op as a local activity, inside the workflow task as Brigade's model step is");
    if (medians['bare-turn'])
      say("  bare-turn = floor-local whose local activity does the in-process step's work: the limit as one program");
    if (peerSide)
      say('  ai-sdk = @temporalio/ai-sdk: generateText in the workflow, model and tool as activities (bench/workflows/peer.ts)');
    say("  limit  = floor-local + the in-process step (issue 49): what Temporal must cost for a turn of Brigade's shape plus");
    say("           what the step's own work must (per process and per thread as well); B/limit = the median of the rounds' ratios");
    if (localFloorSide) say("  B/fl-local = Brigade / floor-local, the median of the rounds' ratios (reported, no target)");
    const header = [
      padEnd('', 44),
      ...sides.map((side) => pad(side.name, SIDE_WIDTH)),
      ...(medianLocalLimit ? [pad('limit', 9), pad('B/limit', 9)] : []),
      ...(peerSide ? [pad('B/ai-sdk', 9)] : []),
      ...(localFloor ? [pad('B/fl-local', 11)] : []),
    ].join('');
    say(header);
    type Side = (typeof sides)[number];
    const row = (
      label: string,
      value: (side: Side) => number,
      digits: number,
      limit?: number,
      toLimit?: number,
      toPeer?: number,
      toLocalFloor?: number,
    ) =>
      say(
        [
          padEnd(`  ${label}`, 44),
          ...sides.map((side) => pad(fmt(value(side), digits), SIDE_WIDTH)),
          ...(medianLocalLimit ? [pad(fmt(limit, digits), 9), pad(toLimit === undefined ? '' : x(toLimit), 9)] : []),
          ...(peerSide ? [pad(toPeer === undefined ? '' : x(toPeer), 9)] : []),
          ...(localFloor ? [pad(toLocalFloor === undefined ? '' : x(toLocalFloor), 11)] : []),
        ].join(''),
      );
    row(
      'turns/s, closed loop (lookup + chat)',
      (side) => side.capacity,
      1,
      undefined,
      undefined,
      medianRatios?.capacityToPeer,
      localFloor?.capacity,
    );
    row('lookup p50 ms, closed loop', (side) => side.closedP50, 1);
    const toLocal = medianRatios?.toLocalLimit;
    row('lookup p50 ms, alone (interleaved)', (side) => side.lone, 1, medianLocalLimit?.lone, toLocal?.lone, undefined, localFloor?.lone);
    row('CPU ms per lookup turn, whole stack', (side) => side.cpu, 2, medianLocalLimit?.cpu, toLocal?.cpu, undefined, localFloor?.cpu);
    const groupNames = [...new Set(sides.flatMap((side) => Object.keys(side.groups)))].sort();
    for (const group of groupNames)
      row(
        `  of which ${group}`,
        (side) => side.groups[group] ?? 0,
        2,
        medianLocalLimit?.groups[group],
        toLocal?.groups[group],
        undefined,
        localFloor?.groups[group],
      );
    const threadNames = [...new Set(sides.flatMap((side) => Object.keys(side.threads)))].sort();
    for (const thread of threadNames)
      row(
        `    node thread: ${thread}`,
        (side) => side.threads[thread] ?? 0,
        2,
        medianLocalLimit?.threads[thread],
        toLocal?.threads[thread],
        undefined,
        localFloor?.threads[thread],
      );
    say('  per round (CPU ms per lookup turn and lone p50 ms: Brigade / limit = ratio; capacity: Brigade / ai-sdk = ratio;');
    say('  the regular limit, the floor + in-process step, in brackets)');
    for (const [index, round] of rounds.entries()) {
      const local = localLimitOf(round);
      const regular = limitOf(round);
      const ratios = ratiosOf(round);
      say(
        `    round ${index + 1}: CPU ${fmt(round.Brigade?.cpu)} / ${fmt(local?.cpu)} = ${x(ratios?.toLocalLimit.cpu ?? NaN)} (${fmt(regular?.cpu)} = ${x(ratios?.cpu ?? NaN)}); ` +
          `lone ${fmt(round.Brigade?.lone)} / ${fmt(local?.lone)} = ${x(ratios?.toLocalLimit.lone ?? NaN)} (${fmt(regular?.lone)} = ${x(ratios?.lone ?? NaN)}); ` +
          `capacity ${fmt(round.Brigade?.capacity)} / ${fmt(round['ai-sdk']?.capacity)} = ${x(ratios?.capacityToPeer ?? NaN)}`,
      );
    }
    say();
    for (const line of aboveLimitLines) say(line);
    say();
    for (const line of countLines) say(line);
    say();
  }
  say(`Targets (issue 49; 2 cores, ${CLUSTER_SHAPE ? 'cluster shape' : 'dev server'}, ${CONVERSATIONS} concurrent conversations)`);
  for (const target of targets) say(`  ${padEnd(target.name, 74)}${pad(target.value, 11)}   ${target.met ? 'met' : 'MISSED'}`);
  if (localFloor && medianRatios) {
    say('Reported, no target (issue 43): Brigade against the floor of its own shape, its step as a local activity');
    for (const line of reported) say(`  ${padEnd(line.name, 74)}${pad(line.value, 11)}`);
  }
  say('Earlier targets (issues 3, 12, 19 and 33), for comparison');
  for (const target of earlier) say(`  ${padEnd(target.name, 74)}${pad(target.value, 11)}   ${target.met ? 'met' : 'MISSED'}`);
  if (tally.errors || tally.unexpected) {
    say();
    say(`Problems: ${tally.errors} failed update(s), ${tally.unexpected} unexpected result(s); first: ${tally.firstProblem}`);
  }
  say(
    `(run took ${((performance.now() - runStarted) / 1000).toFixed(1)} s including ${(services.startupMs / 1000).toFixed(1)} s of start-up)`,
  );

  const summaryJson = (summary: Summary) => ({
    n: summary.count,
    p50: summary.p50,
    p95: summary.p95,
    p99: summary.p99,
    mean: summary.mean,
    max: summary.max,
  });
  const runJson = (run: Run | undefined) => (run ? { ms: summaryJson(s(run)), perSecond: perSecond(run), cpuPct: run.cpu ?? null } : null);
  const json = {
    bench: 'brigade-turns',
    settings: {
      conversations: CONVERSATIONS,
      turns: TURNS,
      warmup: WARMUP,
      approvals: APPROVALS,
      rate: RATE,
      longTurns: LONG_TURNS,
      rounds: ROUNDS,
      loneTurnsPerRound: LONE_PER_ROUND,
      pgPool: PG_POOL,
      workerOptions: WORKER_OPTIONS ?? null,
      shape: CLUSTER_SHAPE ? 'cluster' : 'dev',
      temporal: services.describe.temporal,
      cores: os.availableParallelism(),
      loadAverage: os.loadavg(),
    },
    temporal: {
      lookupClosed: runJson(lookupClosed),
      chatClosed: runJson(chatClosed),
      lookupPaced: runJson(lookupPaced),
      chatPaced: runJson(chatPaced),
      approvalParkMs: summaryJson(summarise(approvals.parkLatencies)),
      approvalToResultMs: summaryJson(s(approvals)),
      approvalToToolResultMs: summaryJson(summarise(approvals.toolResultLatencies)),
      lookupAloneMs: summaryJson(s(brigadeLoneRun)),
      longConversationMs: summaryJson(s(withoutFirst(longRun))),
      turnsPerSecond: throughput,
    },
    inProcess: {
      lookupClosed: runJson(bareLookupClosed),
      chatClosed: runJson(bareChatClosed),
      lookupPaced: runJson(bareLookupPaced),
      lookupAloneMs: summaryJson(s(bareSolo)),
    },
    overheadP50: {
      alone: ratio(brigadeLoneRun, bareSolo),
      paced: lookupPaced ? ratio(lookupPaced, bareLookupPaced) : null,
      closed: ratio(lookupClosed, bareLookupClosed),
    },
    history: {
      encoding: 'protobuf History.encode; json = proto3 JSON',
      turn5: at5 ?? null,
      [`turn${LONG_TURNS}`]: atLong ?? null,
      bytesRatio,
      totalEvents: longEvents.length,
      totalBytes: totalSize.protoBytes,
      lonePerTurn: perTurn,
      heartbeatsPerClosedLookupTurn: heartbeatsPerLookup,
    },
    phasesMs: {
      lookupAlone: meanPhases(longSlices.slice(1).map(phasesOf)) ?? null,
      lookupPaced: meanPhases(slicesOf(lookupPaced, 'sendMessage', LOOKUP_ACTIVITIES).map(phasesOf)) ?? null,
      approve: meanPhases(slicesOf(approvals, 'decide').map(phasesOf)) ?? null,
      lookupClosed: meanPhases(slicesOf(lookupClosed, 'sendMessage', LOOKUP_ACTIVITIES).map(phasesOf)) ?? null,
    },
    targets: Object.fromEntries(targets.map((target) => [target.name, { value: target.value, met: target.met }])),
    // the rounds' ratios behind the targets (issue 49: medians with their spread)
    targetRounds: roundRatios.map((r) => ({ cpu: r.toLocalLimit.cpu, lone: r.toLocalLimit.lone, capacityToPeer: r.capacityToPeer })),
    earlierTargets: Object.fromEntries(earlier.map((target) => [target.name, { value: target.value, met: target.met }])),
    reported: Object.fromEntries(reported.map((line) => [line.name, line.value])),
    cpuMsPerLookupTurn: lookupCpu,
    aboveLimitMsPerLookupTurn: aboveLimit,
    limit: {
      definition:
        'judged (issue 49): localMedian = floor-local + in-process step; median = the regular floor + in-process step (issue 33); per round, medians over the rounds',
      median: medianLimit ?? null,
      localMedian: medianOf(rounds.map((round) => localLimitOf(round)).filter((limit): limit is Limit => limit !== undefined)) ?? null,
      brigadeToLimitMedian: medianRatios ?? null,
      rounds: rounds.map((round) => ({
        sides: round,
        limit: limitOf(round) ?? null,
        localLimit: localLimitOf(round) ?? null,
        brigadeToLimit: ratiosOf(round) ?? null,
      })),
    },
    sideBySide: Object.fromEntries(
      sides.map((side) => [
        side.name,
        {
          turnsPerSecond: side.capacity,
          cpuMsPerLookupTurn: side.cpu,
          loneP50Ms: side.lone,
          closedLookupP50Ms: side.closedP50,
          cpuMsPerTurnByGroup: side.groups,
          cpuMsPerTurnByThread: side.threads,
          countsPerLookupTurn: side.counts ?? null,
        },
      ]),
    ),
    problems: { errors: tally.errors, unexpected: tally.unexpected, first: tally.firstProblem ?? null },
  };

  progress('stopping...');
  await stopAll();
  clearTimeout(hardLimit);
  if (MEMORY_ROW && !CLUSTER_SHAPE && !process.env.BENCH_TEMPORAL_ADDRESS) {
    // The tests' shape (history in memory), as one extra row: a second run in a process of its own, after this
    // one's services stopped, so the two do not share the machine.
    progress('extra row: the same closed loop on an in-memory dev server (a second run)...');
    const memory = await memoryShape();
    const fields = (j: any) => j?.sideBySide ?? {};
    const mem = fields(memory);
    lines.push('');
    lines.push("Extra row: the dev server with its history in memory (the tests' shape; a second run of one round, after this one)");
    lines.push([padEnd('', 44), ...Object.keys(mem).map((name) => pad(name, SIDE_WIDTH))].join(''));
    lines.push(
      [
        padEnd('  turns/s, closed loop (lookup + chat)', 44),
        ...Object.values(mem).map((v: any) => pad(fmt(v.turnsPerSecond), SIDE_WIDTH)),
      ].join(''),
    );
    lines.push(
      [padEnd('  lookup p50 ms, alone (interleaved)', 44), ...Object.values(mem).map((v: any) => pad(fmt(v.loneP50Ms), SIDE_WIDTH))].join(
        '',
      ),
    );
    lines.push(
      [
        padEnd('  CPU ms per lookup turn, whole stack', 44),
        ...Object.values(mem).map((v: any) => pad(fmt(v.cpuMsPerLookupTurn, 2), SIDE_WIDTH)),
      ].join(''),
    );
    (json as Record<string, unknown>).inMemoryShape = memory
      ? { temporal: memory.settings?.temporal, sideBySide: mem, targets: memory.targets }
      : null;
  }
  console.log(lines.join('\n'));
  console.log(JSON.stringify(json, (_key, value: unknown) => (typeof value === 'number' ? round(value, 2) : value)));
}

/** bench/turns.ts again with the dev server in memory and no approvals or paced runs; its JSON line, or undefined */
function memoryShape(): Promise<any> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        BENCH_TEMPORAL_MEMORY: '1',
        BENCH_MEMORY_ROW: '0',
        BENCH_RATE: '0',
        BENCH_APPROVALS: '1',
        BENCH_LONG_TURNS: '30',
        BENCH_ROUNDS: '1',
      },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out.trimEnd().split('\n').at(-1) ?? ''));
      } catch {
        progress('the in-memory run printed no JSON line');
        resolve(undefined);
      }
    });
  });
}

if (process.argv.includes('--cluster')) {
  // The parent of a side-by-side run: it starts nothing itself.
  clearTimeout(hardLimit);
  compareShapes().catch((error: unknown) => {
    console.error(`bench failed: ${(error as Error).message}`);
    process.exitCode = 1;
  });
} else
  main().catch(async (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await stopAll();
    clearTimeout(hardLimit);
    process.exitCode = 1;
  });
