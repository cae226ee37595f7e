// `npm run bench:long`: one support conversation of a thousand turns (issue 44's done-when). Starts its own
// services (bench/services.ts), an in-process worker whose model is the real @google/genai client against a
// scripted Gemini-wire server in this process (test/support/fake-gemini.ts), and drives the turns through
// @temporalio/client as the API does. Every few turns is a lookup whose tool result is sizeable. Prints, at
// turns 10, 100, 500 and 1,000 (those the run reaches, and its last): what each chat model call was sent (the
// wire server's view of the request: its bytes and the input tokens it reports for it) and the turn's latency
// (p50 over a window of turns around it); Temporal's history of each run across continue-as-new; and that every
// message is still in the transcript. Then one JSON line for machines.
//
// What a call is sent should stop growing once MODEL_CONTEXT_TOKENS is reached; where nothing bounds it, it
// grows with the turn (what issue 44 is about), and so does the turn's latency.
//
// Settings (env, with defaults):
//   BENCH_LONG_TURNS=1000        turns of the conversation (200 is a quick run)
//   BENCH_LONG_LOOKUP_EVERY=5    every n-th turn is a lookup (the model calls get_customer_orders)
//   BENCH_LONG_ORDERS=60         orders of the lookup's customer (about 110 bytes each in its result)
//   BENCH_LONG_WINDOW=9          turns around a checkpoint whose latencies make its p50
//   MODEL_CONTEXT_TOKENS=16000   the context budget the worker is given (well under what 1,000 turns send)
//   BENCH_TIMEOUT_S=7200         hard limit for the whole run
//   BENCH_DATABASE_URL, BENCH_TEMPORAL_ADDRESS, BENCH_TEMPORAL_MEMORY=1: see services.ts
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type protoModule from '@temporalio/proto';
import { builtInCatalog } from '../src/agents/catalog.ts';
import { sessionSettings } from '../src/api/session-settings.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { insertConversation } from '../src/db/conversations.ts';
import { asUser, createPool } from '../src/db/pool.ts';
import { withClient } from '../src/db/with-client.ts';
import { createGeminiModel } from '../src/model/gemini.ts';
import { estimateTokens } from '../src/model/token-estimate.ts';
import { dataConverter } from '../src/protection/data-converter.ts';
import { CHAT_SESSION_TASK_TIMEOUT, chatSessionWorkflowId, sendMessageUpdate } from '../src/shared/definitions.ts';
import type { AgentName, ChatSessionInput } from '../src/shared/messages.ts';
import { AGENT_KEY, USER_KEY, WAITING_KEY } from '../src/shared/search-attributes.ts';
import type { ChatSession } from '../src/workflows/chat-session.ts';
import { installTemporalRuntime } from '../stack/temporal-runtime.ts';
import { createWorker } from '../stack/worker.ts';
import { endsWithToolResults, lastContent, type FakeReply, type RecordedRequest, startFakeGemini } from '../test/support/fake-gemini.ts';
import { BENCH_PAYLOAD_ENV } from './payload-key.ts';
import { startServices } from './services.ts';
import { round, sizeOf, summarise } from './stats.ts';

type HistoryEvent = protoModule.temporal.api.history.v1.IHistoryEvent;

const CATALOG = builtInCatalog();
const AGENT: AgentName = 'support';

function intSetting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

const TURNS = intSetting('BENCH_LONG_TURNS', 1000, 10, 20_000);
const LOOKUP_EVERY = intSetting('BENCH_LONG_LOOKUP_EVERY', 5, 1, 1000);
const ORDERS = intSetting('BENCH_LONG_ORDERS', 60, 1, 10_000);
const WINDOW = intSetting('BENCH_LONG_WINDOW', 9, 1, 101);
const CONTEXT_TOKENS = String(intSetting('MODEL_CONTEXT_TOKENS', 16_000, 1, 10_000_000));
const TIMEOUT_S = intSetting('BENCH_TIMEOUT_S', 7200, 10, 86_400);
const CHECKPOINTS = [...new Set([10, 100, 500, 1000, TURNS].filter((turn) => turn <= TURNS))].sort((a, b) => a - b);

/** the customer whose orders the lookups list: a row of the bench's own database, with ORDERS orders */
const BULK_CUSTOMER = '7000001';
const lookupText = (turn: number) => `Turn ${turn}: please list every order for customer ${BULK_CUSTOMER}, I need to check them all again.`;
// A chat turn adds a few hundred bytes each way, as a person and an agent trading sentences do.
const chatText = (turn: number) =>
  `Turn ${turn}: thanks. One more thing while I have you: the customer says the delivery window they were given ` +
  `does not suit them, and they would like to know whether a courier can come in the evening instead.`;
const ANSWER =
  'I understand. Evening deliveries depend on the courier in their area; I have noted the request on the account ' +
  'and the customer will be contacted to arrange a suitable time. Is there anything else I can help with?';
const LOOKUP_ANSWER = 'Here are all of their orders, with their status: most have shipped and a few are still processing.';

const progress = (line: string) => process.stderr.write(`bench:long: ${line}\n`);

// ---- the model: a Gemini-wire server that records what each call was sent ----------------------------------

interface CallSent {
  turn: number;
  /** a step of the conversation (it declares the agent's tools) or another call made for it (a summary, say) */
  kind: 'chat' | 'other';
  /** the request body's JSON bytes, as the server received it */
  bytes: number;
  /** the input tokens the server reports for it (about four bytes a token, as src/model/token-estimate.ts counts) */
  inputTokens: number;
}

/** The turn being driven: its number, what the person said, and whether it is a lookup. */
interface Turn {
  n: number;
  text: string;
  lookup: boolean;
}

/**
 * The answer to a request, and what it was sent; the server's usage reports the tokens recorded. The turn's own
 * step ends with what the person just said, or with its lookup's result; any other call (a summary, say) is
 * counted apart.
 */
function answer(request: RecordedRequest, turn: Turn, calls: CallSent[]): FakeReply {
  const text = JSON.stringify(request.body);
  const inputTokens = estimateTokens(text);
  const declared = (request.body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((d) => d.name));
  const said = (lastContent(request)?.parts ?? []).map((part) => part.text ?? '').join('');
  const afterTool = turn.lookup && endsWithToolResults(request);
  const chat = declared.includes('get_customer_orders') && (said === turn.text || afterTool);
  calls.push({ turn: turn.n, kind: chat ? 'chat' : 'other', bytes: Buffer.byteLength(text), inputTokens });
  const usage = { promptTokenCount: inputTokens };
  if (!chat) return { kind: 'text', text: 'Summary: a support conversation about evening deliveries and order lists.', usage };
  if (afterTool) return { kind: 'text', text: LOOKUP_ANSWER, usage };
  if (turn.lookup) return { kind: 'calls', calls: [{ name: 'get_customer_orders', args: { customer_id: BULK_CUSTOMER } }], usage };
  return { kind: 'text', text: ANSWER, usage };
}

// ---- the conversation ---------------------------------------------------------------------------------------

/** The customer and orders the lookups list, as the schema's owner (the app's role may not insert them). */
async function seedOrders(databaseUrl: string): Promise<void> {
  const products = ['Wireless Headphones', 'Smartphone Case', 'Bluetooth Speaker', 'Fitness Tracker', 'Laptop Sleeve'];
  const statuses = ['Processing', 'Shipped', 'Delivered'];
  await withClient(databaseUrl, async (db) => {
    await db.query(
      `INSERT INTO customers (id, name, email, phone, username) VALUES ($1, 'Bench Bulk Buyer', 'bulk@bench.test', '555-000-0001', 'bulkbuyer')`,
      [BULK_CUSTOMER],
    );
    for (let i = 0; i < ORDERS; i += 1) {
      await db.query('INSERT INTO orders (id, customer_id, product, quantity, price, status) VALUES ($1, $2, $3, $4, $5, $6)', [
        String(70_000 + i),
        BULK_CUSTOMER,
        products[i % products.length],
        1 + (i % 3),
        19.99 + i,
        statuses[i % statuses.length],
      ]);
    }
  });
}

/** Inserts the row and starts the workflow as POST /conversations does (activities write rows that reference it). */
async function openConversation(client: Client, pool: ReturnType<typeof createPool>, config: Config) {
  const id = randomUUID();
  const userId = 'bench-long-user';
  const workflowId = chatSessionWorkflowId(id);
  const title = 'bench long conversation';
  const input: ChatSessionInput = { conversationId: id, userId, agent: AGENT, title, settings: sessionSettings(config, CATALOG) };
  let firstRunId = '';
  await asUser(pool, userId, async (db) => {
    await insertConversation(db, { id, userId, agent: AGENT, client: null, title, workflowId });
    const started = await client.workflow.start<ChatSession>('chatSession', {
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
    firstRunId = started.firstExecutionRunId;
  });
  return { id, workflowId, firstRunId, handle: client.workflow.getHandle(workflowId) as WorkflowHandle<ChatSession> };
}

/** Every run of the workflow, first to last, by following continue-as-new from the first. */
async function runsOf(client: Client, workflowId: string, firstRunId: string): Promise<{ runId: string; events: HistoryEvent[] }[]> {
  const runs: { runId: string; events: HistoryEvent[] }[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const events: HistoryEvent[] = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    runs.push({ runId, events });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

// ---- report -------------------------------------------------------------------------------------------------

const fmt = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value) ? '-' : value.toLocaleString('en-US', { maximumFractionDigits: digits });
const pad = (text: string, width: number) => text.padStart(width);

async function main(): Promise<void> {
  const runStarted = performance.now();
  const stops: (() => Promise<unknown>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => progress(`stopping: ${(error as Error).message}`));
  };
  const hardLimit = setTimeout(() => {
    progress(`the run took longer than BENCH_TIMEOUT_S=${TIMEOUT_S} s; stopping`);
    void stopAll().finally(() => process.exit(2));
  }, TIMEOUT_S * 1000);
  try {
    progress('starting PostgreSQL, the Temporal dev server, the workflow bundle and the Gemini-wire server...');
    const fake = await startFakeGemini();
    // summary requests reach the script: the bench counts them
    fake.scriptSummaries = true;
    stops.push(() => fake.close());
    const calls: CallSent[] = [];
    let current: Turn = { n: 0, text: '', lookup: false };
    fake.scriptFn((request) => {
      // only what each call was sent is kept: bodies of a long conversation are megabytes each
      fake.requests.length = 0;
      return answer(request, current, calls);
    });
    const services = await startServices(() => undefined);
    stops.push(() => services.stop());
    progress(`services ready in ${(services.startupMs / 1000).toFixed(1)} s`);
    await seedOrders(services.databaseUrl);

    installTemporalRuntime('warn');
    const config = loadConfig(
      {
        DATABASE_URL: services.databaseUrl,
        TEMPORAL_ADDRESS: services.temporalAddress,
        TEMPORAL_TASK_QUEUE: `bench-long-${process.pid}-${randomUUID().slice(0, 8)}`,
        LOG_LEVEL: 'warn',
        ...BENCH_PAYLOAD_ENV,
        GEMINI_API_KEY: 'bench',
        GEMINI_BASE_URL: fake.baseUrl,
        GEMINI_MODEL: 'gemini-2.5-flash',
        MODEL_CONTEXT_TOKENS: CONTEXT_TOKENS,
        // one person in a hurry: the per-user limits would pace the bench, not measure the conversation
        USER_TURNS_PER_MINUTE: '0',
        USER_REQUESTS_PER_MINUTE: '0',
        USER_CONCURRENT_REQUESTS: '0',
      },
      CATALOG,
    );
    const pool = createPool(services.databaseUrl);
    pool.on('error', (error) => progress(`PostgreSQL connection lost: ${error.message}`));
    stops.push(() => pool.end());
    const nativeConnection = await NativeConnection.connect({ address: services.temporalAddress });
    stops.push(() => nativeConnection.close());
    const worker = await createWorker({
      catalog: CATALOG,
      config,
      connection: nativeConnection,
      pool,
      workflowBundlePath: services.bundlePath,
      model: createGeminiModel({ apiKey: 'bench', baseUrl: fake.baseUrl, model: 'gemini-2.5-flash' }),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
    });
    const running = worker.run();
    running.catch((error: unknown) => progress(`the worker failed: ${(error as Error).message}`));
    stops.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
    });
    const connection = await Connection.connect({ address: services.temporalAddress });
    stops.push(() => connection.close());
    const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: dataConverter(config, pool) });

    const conversation = await openConversation(client, pool, config);
    progress(
      `${TURNS} turns, a lookup of ${ORDERS} orders every ${LOOKUP_EVERY}, MODEL_CONTEXT_TOKENS=${CONTEXT_TOKENS}; ` +
        `checkpoints at turns ${CHECKPOINTS.join(', ')}`,
    );
    const latencies: number[] = [];
    let returned = 0;
    let expected = 0;
    const problems: string[] = [];
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const lookup = turn % LOOKUP_EVERY === 0;
      current = { n: turn, text: lookup ? lookupText(turn) : chatText(turn), lookup };
      const started = performance.now();
      try {
        const result = await conversation.handle.executeUpdate(sendMessageUpdate, { args: [{ text: current.text }] });
        latencies.push(performance.now() - started);
        returned += result.messages.length;
        // user, call, tool result, answer; or user, answer
        expected += lookup ? 4 : 2;
        const last = result.messages.at(-1);
        if (last?.role !== 'assistant' || last.text !== (lookup ? LOOKUP_ANSWER : ANSWER) || result.pending.length) {
          problems.push(`turn ${turn}: ${JSON.stringify(result).slice(0, 300)}`);
        }
      } catch (error) {
        latencies.push(NaN);
        problems.push(`turn ${turn}: ${(error as Error).message}`);
      }
      if (turn % 50 === 0 || turn === TURNS) {
        const sent = calls.filter((call) => call.turn === turn && call.kind === 'chat');
        progress(
          `turn ${turn}: ${fmt(latencies.at(-1), 1)} ms, ${fmt(Math.max(...sent.map((call) => call.inputTokens)))} input tokens in its largest call` +
            (problems.length ? `; ${problems.length} problem(s), last: ${problems.at(-1)}` : ''),
        );
      }
    }
    current = { n: TURNS + 1, text: '', lookup: false };

    // Temporal's side: each run's history across continue-as-new
    const runs = await runsOf(client, conversation.workflowId, conversation.firstRunId);
    const runSizes = runs.map((run) => ({ runId: run.runId, events: run.events.length, protoBytes: sizeOf(run.events).protoBytes }));
    // The person's side: every message still in the transcript, as the schema's owner counts it
    const rows = await withClient(services.databaseUrl, async (db) =>
      Number((await db.query('SELECT count(*) AS count FROM messages WHERE conversation_id = $1', [conversation.id])).rows[0].count),
    );

    const checkpoints = CHECKPOINTS.map((at) => {
      const sent = calls.filter((call) => call.turn === at && call.kind === 'chat');
      const from = Math.max(1, Math.min(at - Math.floor(WINDOW / 2), TURNS - WINDOW + 1));
      const window = latencies.slice(from - 1, from - 1 + WINDOW).filter(Number.isFinite);
      return {
        turn: at,
        lookup: at % LOOKUP_EVERY === 0,
        calls: sent.length,
        inputTokens: sent.map((call) => call.inputTokens),
        bytes: sent.map((call) => call.bytes),
        latencyMs: latencies[at - 1]!,
        windowP50Ms: summarise(window).p50,
        window: [from, from + WINDOW - 1] as const,
      };
    });
    const chatCalls = calls.filter((call) => call.kind === 'chat');
    const other = calls.filter((call) => call.kind === 'other');
    const titles = fake.titleRequests.length;

    const lines: string[] = [];
    const say = (line = '') => lines.push(line);
    say(
      `One support conversation of ${TURNS} turns over the Gemini wire (@google/genai against a scripted server), ` +
        `a lookup of ${ORDERS} orders every ${LOOKUP_EVERY} turns; MODEL_CONTEXT_TOKENS=${CONTEXT_TOKENS}`,
    );
    say(
      `  ${services.describe.temporal}; PostgreSQL ${services.describe.postgres}; ${os.availableParallelism()} cores, load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    say();
    say('What each chat model call was sent (the wire server: request JSON bytes, input tokens it reports), and the turn latency');
    say(
      [
        '  turn'.padEnd(16),
        pad('calls', 6),
        pad('input tokens per call', 26),
        pad('bytes per call', 22),
        pad('turn ms', 9),
        pad('p50 ms (window)', 24),
      ].join(''),
    );
    for (const c of checkpoints) {
      say(
        [
          `  ${c.turn}${c.lookup ? ' (lookup)' : ''}`.padEnd(16),
          pad(String(c.calls), 6),
          pad(c.inputTokens.map((n) => fmt(n)).join(' / '), 26),
          pad(c.bytes.map((n) => fmt(n)).join(' / '), 22),
          pad(fmt(c.latencyMs, 1), 9),
          pad(`${fmt(c.windowP50Ms, 1)} (turns ${c.window[0]}-${c.window[1]})`, 24),
        ].join(''),
      );
    }
    const first = checkpoints[0];
    const lastPoint = checkpoints.at(-1);
    const maxTokens = (c: (typeof checkpoints)[number] | undefined) => Math.max(...(c?.inputTokens ?? [NaN]));
    say(
      `  largest call at turn ${lastPoint?.turn} / at turn ${first?.turn}: ${fmt(maxTokens(lastPoint) / maxTokens(first), 2)}x input tokens; ` +
        `p50 ${fmt((lastPoint?.windowP50Ms ?? NaN) / (first?.windowP50Ms ?? NaN), 2)}x`,
    );
    // Flat once the budget is reached: the last checkpoint against the first one past the budget (turn 100 of 1,000).
    const pastBudget = checkpoints.find((c) => c.turn >= 100 && c !== lastPoint);
    const flat = pastBudget
      ? {
          from: pastBudget.turn,
          inputTokens: maxTokens(lastPoint) / maxTokens(pastBudget),
          p50: (lastPoint?.windowP50Ms ?? NaN) / pastBudget.windowP50Ms,
        }
      : undefined;
    if (flat)
      say(
        `  turn ${lastPoint?.turn} / turn ${flat.from} (both past the budget): ${fmt(flat.inputTokens, 2)}x input tokens, p50 ${fmt(flat.p50, 2)}x (flat: about 1x)`,
      );
    say(
      `  ${chatCalls.length} chat calls (largest ${fmt(Math.max(...chatCalls.map((call) => call.inputTokens)))} input tokens), ` +
        `${other.length} other calls (summaries and the like; ${fmt(other.reduce((sum, call) => sum + call.inputTokens, 0))} input tokens in all), ${titles} title call(s)`,
    );
    say(
      `  all turns: ${JSON.stringify(summarise(latencies.filter(Number.isFinite)), (_k, v: unknown) => (typeof v === 'number' ? round(v, 1) : v))} ms`,
    );
    say();
    say(
      `Temporal's history per run (continue-as-new after CONTINUE_AS_NEW_AFTER_TURNS=${config.CONTINUE_AS_NEW_AFTER_TURNS} turns): ${runs.length} run(s)`,
    );
    for (const [index, run] of runSizes.entries()) say(`  run ${index + 1}: ${fmt(run.events)} events, ${fmt(run.protoBytes)} bytes`);
    say(
      `  largest run: ${fmt(Math.max(...runSizes.map((run) => run.events)))} events, ${fmt(Math.max(...runSizes.map((run) => run.protoBytes)))} bytes`,
    );
    say();
    say(
      `Transcript: ${fmt(rows)} message rows; the turns returned ${fmt(returned)}, ${fmt(expected)} expected ` +
        `(${rows >= expected && rows === returned ? 'every message is still there' : 'MISSING OR EXTRA ROWS'})`,
    );
    if (problems.length) {
      say();
      say(`Problems: ${problems.length}; first: ${problems[0]}`);
    }
    say(
      `(run took ${((performance.now() - runStarted) / 1000).toFixed(1)} s including ${(services.startupMs / 1000).toFixed(1)} s of start-up)`,
    );

    const json = {
      bench: 'brigade-long-conversation',
      settings: { turns: TURNS, lookupEvery: LOOKUP_EVERY, orders: ORDERS, window: WINDOW, modelContextTokens: Number(CONTEXT_TOKENS) },
      checkpoints,
      flat: flat ?? null,
      chatCalls: { count: chatCalls.length, maxInputTokens: Math.max(...chatCalls.map((call) => call.inputTokens)) },
      otherCalls: { count: other.length, inputTokens: other.reduce((sum, call) => sum + call.inputTokens, 0) },
      titleCalls: titles,
      turnLatencyMs: summarise(latencies.filter(Number.isFinite)),
      history: { runs: runSizes.length, perRun: runSizes.map(({ events, protoBytes }) => ({ events, protoBytes })) },
      transcript: { rows, returned, expected },
      problems: { count: problems.length, first: problems[0] ?? null },
    };
    console.log(lines.join('\n'));
    console.log(JSON.stringify(json, (_key, value: unknown) => (typeof value === 'number' ? round(value, 2) : value)));
    if (problems.length || rows !== returned || rows < expected) process.exitCode = 1;
  } finally {
    clearTimeout(hardLimit);
    await stopAll();
  }
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
