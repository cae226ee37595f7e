import { type NativeConnection, Worker } from '@temporalio/worker';
import type pg from 'pg';
import { createActivities } from './activities/index.ts';
import { STOP_HEARTBEAT_MS } from './activities/model-step.ts';
import type { Config } from './config.ts';
import { loadPrompt } from './model/prompts.ts';
import { selectModel } from './model/select.ts';
import type { ChatModel } from './model/types.ts';
import { startAgentsForWorker, toolImplementations } from './agents/server-registry.ts';

import { WORKFLOWS_PATH } from './stack/bundle-workflows.ts';

export { WORKFLOWS_PATH };

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
  await startAgentsForWorker({ config, pool });
  const bundlePath = options.workflowBundlePath ?? config.WORKFLOW_BUNDLE_PATH;
  const activities = createActivities({
    config,
    pool,
    model: options.model ?? selectModel(config),
    systemPrompt: loadPrompt,
    implementations: toolImplementations(),
  });
  return Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: options.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    ...(bundlePath
      ? { workflowBundle: { codePath: bundlePath } }
      : { workflowsPath: WORKFLOWS_PATH }),
    activities,
    // Stop reaches a streaming model step in a heartbeat's answer: send them as often as the step beats.
    maxHeartbeatThrottleInterval: STOP_HEARTBEAT_MS,
  });
}
