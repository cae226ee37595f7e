import { type NativeConnection, Worker } from '@temporalio/worker';
import type pg from 'pg';
import { createActivities } from '../src/activities/index.ts';
import { StopNotices } from '../src/activities/stop-notices.ts';
import { StepHandoffs } from '../src/activities/step-handoff.ts';
import { STOP_HEARTBEAT_MS } from '../src/activities/step-heartbeat.ts';
import type { Config } from '../src/config.ts';
import { McpConnections } from '../src/mcp/connections.ts';
import { oauthRedirectUrl } from '../src/mcp/oauth-connect.ts';
import { TokenVault } from '../src/mcp/token-vault.ts';
import { dataConverter } from '../src/protection/data-converter.ts';
import { createRetentionActivities } from '../src/protection/retention.ts';
import { createScheduleActivities } from '../src/api/schedule-runs.ts';
import type { Client } from '@temporalio/client';
import { loadMcpConfig } from '../src/mcp/config.ts';
import { systemPrompts } from '../src/model/prompts.ts';
import { selectModel } from '../src/model/select.ts';
import type { ChatModel } from '../src/model/types.ts';
import type { ServerCatalog } from '../src/api/agent-server.ts';
import { instrumentModel, instrumentTools } from '../src/telemetry/model.ts';
import { WORKFLOW_INTERCEPTOR_MODULES, workerTelemetry } from '../src/telemetry/temporal.ts';

import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { BUNDLER_OPTIONS, workflowBundleCode, writeWorkflowEntry } from './bundle-workflows.ts';
import { deploymentOptions } from '../src/worker-deployment.ts';

/** How many turns' model steps (and tools) one worker runs at once. */
const CONCURRENT_TURNS = 200;

/**
 * The worker's PostgreSQL connections: a step makes about a dozen short round trips, and with pg's default of
 * 10 the steps of 50 busy conversations queued for a connection (`npm run bench:turns`: 2.0x the ai-sdk
 * peer's capacity with 10, 2.4x with 20, the machine's CPU then used to 188 % instead of 174 %).
 */
export const WORKER_POOL_SIZE = 20;

export interface WorkerOptions {
  /** the agents it serves: their tools, activities, prompts and, without a prebuilt bundle, workflows */
  catalog: ServerCatalog;
  config: Config;
  connection: NativeConnection;
  pool: pg.Pool;
  /** a prebuilt bundle (tests, production images); without it the worker bundles the catalog's workflows */
  workflowBundlePath?: string;
  /** defaults to the model the config selects */
  model?: ChatModel;
  taskQueue?: string;
  /** for the retention sweep's activity (deletes Temporal executions) and the schedules' runs; without it the worker runs neither */
  client?: Client;
}

export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const { catalog, config, connection, pool } = options;
  await catalog.startForWorker({ config, pool });
  const bundlePath = options.workflowBundlePath ?? config.WORKFLOW_BUNDLE_PATH;
  // MCP servers: a bad BRIGADE_MCP_CONFIG stops the start here; stdio servers stop when the worker does.
  // servers behind OAuth: each conversation's calls with its owner's sealed tokens
  const mcp = new McpConnections(loadMcpConfig(config.BRIGADE_MCP_CONFIG, catalog), {
    vault: new TokenVault(pool, config),
    redirectUrl: oauthRedirectUrl(config),
  });
  const stops = new StopNotices(pool);
  const taskQueue = options.taskQueue ?? config.TEMPORAL_TASK_QUEUE;
  // this process's own queue: only it holds the streams of the model steps it hands off
  const handoffs = new StepHandoffs(
    `${taskQueue}-steps-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    config.MODEL_STEP_HANDOFF_AFTER,
  );
  const activities = createActivities(
    {
      stops,
      handoffs,
      catalog,
      config,
      pool,
      model: instrumentModel(options.model ?? selectModel(config, catalog), {
        captureContent: config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
      }),
      systemPrompt: systemPrompts(catalog),
      implementations: instrumentTools(catalog.toolImplementations()),
    },
    mcp,
  );
  const telemetry = workerTelemetry();
  // A versioned worker's build id is the hash of its bundle, so it bundles (or reads the bundle) first.
  const code = config.WORKER_DEPLOYMENT_NAME
    ? bundlePath
      ? await readFile(bundlePath, 'utf8')
      : await workflowBundleCode({ catalog })
    : undefined;
  const workerDeployment = deploymentOptions(config, () => code!);
  // one codec for both workers of the process: one cache of data keys, one set of its connections
  const converter = dataConverter(config, pool);
  const prebuilt = bundlePath !== undefined || code !== undefined;
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue,
    ...(code
      ? { workflowBundle: { code } }
      : bundlePath
        ? { workflowBundle: { codePath: bundlePath } }
        : { workflowsPath: await writeWorkflowEntry(catalog), bundlerOptions: BUNDLER_OPTIONS }),
    ...(workerDeployment ? { workerDeploymentOptions: workerDeployment } : {}),
    // the retention sweep and the people's schedules (issue 48) call Temporal themselves: only with a client
    activities: options.client
      ? {
          ...activities,
          ...createRetentionActivities({ config, pool, client: options.client }),
          ...createScheduleActivities({ catalog, config, pool, client: options.client }),
        }
      : activities,
    // payloads sealed before they reach Temporal (src/protection/); the bundle is the same either way
    dataConverter: converter,
    // A model step holds its workflow task's slot while it runs (a local activity within the task): the SDK's 40
    // would let a worker run 40 turns at once, fewer than the 100 model activities it ran before.
    maxConcurrentWorkflowTaskExecutions: CONCURRENT_TURNS,
    maxConcurrentLocalActivityExecutions: CONCURRENT_TURNS,
    // Stop reaches a model step of a conversation begun before steps ran within the workflow task (a regular
    // activity) in a heartbeat's answer: send them as often as the step beats.
    maxHeartbeatThrottleInterval: STOP_HEARTBEAT_MS,
    // A prebuilt bundle carries the workflow interceptor modules it was built with (bin/bundle-workflows.ts);
    // naming them again beside it only makes the SDK warn at every start that it ignores them.
    interceptors: { activity: telemetry.activityInbound, ...(prebuilt ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }) },
    sinks: telemetry.sinks,
  });
  const follower = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: handoffs.taskQueue,
    activities: { followModelStep: handoffs.follow },
    dataConverter: converter,
    maxConcurrentActivityTaskExecutions: CONCURRENT_TURNS,
    maxHeartbeatThrottleInterval: STOP_HEARTBEAT_MS,
    // few steps outrun their task: one poll at a time is enough, and costs the server least
    maxConcurrentActivityTaskPolls: 1,
  });
  // one worker to its callers: it runs, and shuts down, with the queue it hands steps off to
  const run = worker.run.bind(worker);
  const shutdown = worker.shutdown.bind(worker);
  worker.shutdown = () => {
    if (follower.getState() === 'RUNNING') follower.shutdown();
    shutdown();
  };
  worker.run = async () => {
    const following = follower.run();
    try {
      await run();
    } finally {
      if (follower.getState() === 'RUNNING') follower.shutdown();
      await following.catch(() => undefined);
      await Promise.all([mcp.close(), stops.close()]);
    }
  };
  return worker;
}
