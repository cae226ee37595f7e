import { type NativeConnection, Worker } from '@temporalio/worker';
import type pg from 'pg';
import { createActivities } from './activities/index.ts';
import type { Config } from './config.ts';
import { setBeerMinClients } from './db/beer-clients.ts';
import { loadPrompt } from './model/prompts.ts';
import { selectModel } from './model/select.ts';
import type { ChatModel } from './model/types.ts';
import { toolImplementations } from './tools/index.ts';
import { instrumentModel, instrumentTools } from './telemetry/model.ts';
import { WORKFLOW_INTERCEPTOR_MODULES, workerTelemetry } from './telemetry/temporal.ts';

export const WORKFLOWS_PATH = new URL('./workflows/index.ts', import.meta.url).pathname;

export interface WorkerOptions {
  config: Config;
  connection: NativeConnection;
  pool: pg.Pool;
  /** a prebuilt bundle (tests, production images); without it the worker bundles src/workflows */
  workflowBundlePath?: string;
  /** defaults to the model the config selects */
  model?: ChatModel;
  taskQueue?: string;
}

export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const { config, connection, pool } = options;
  await setBeerMinClients(pool, config.BEER_MIN_CLIENTS);
  const bundlePath = options.workflowBundlePath ?? config.WORKFLOW_BUNDLE_PATH;
  const activities = createActivities({
    config,
    pool,
    model: instrumentModel(options.model ?? selectModel(config), { captureContent: config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT }),
    systemPrompt: loadPrompt,
    implementations: instrumentTools(toolImplementations),
  });
  const telemetry = workerTelemetry();
  return Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: options.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    ...(bundlePath
      ? { workflowBundle: { codePath: bundlePath } }
      : { workflowsPath: WORKFLOWS_PATH }),
    activities,
    // a prebuilt bundle carries the workflow interceptor modules it was built with (bundle-workflows-main.ts)
    interceptors: { activity: telemetry.activityInbound, workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
    sinks: telemetry.sinks,
  });
}
