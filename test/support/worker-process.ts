// The real `npm run worker` and `npm run api` entry points as child processes: for tests that kill a worker
// mid-work, and for those that need a second API process beside the test app's.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../../stack/ports.ts';
import { temporalAddress, workflowBundlePath } from './harness.ts';
import type { TestApp } from './test-app.ts';

const WORKER_MAIN = new URL('../../bin/worker.ts', import.meta.url).pathname;
const API_MAIN = new URL('../../bin/api.ts', import.meta.url).pathname;

// A worker left running by a failed test would hold the test file's output pipes open, and the test runner
// would wait for it forever: whatever is still running when the file's process exits is killed with it.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `main` (an entry point under bin/) on the app's database, Temporal and task queue with `env` on top;
 * resolves once its output shows `ready`.
 */
async function startEntryPoint(
  main: string,
  ready: string,
  app: Pick<TestApp, 'databaseUrl' | 'taskQueue'>,
  env: Record<string, string>,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: app.databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: app.taskQueue,
      WORKFLOW_BUNDLE_PATH: workflowBundlePath(),
      LOG_LEVEL: 'info',
      // as the test app (test-app.ts): payloads in the clear unless a test gives keys
      PAYLOAD_ENCRYPTION: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${main} exited with ${code} before "${ready}":\n${output}`)));
  });
  return child;
}

/** Starts a worker on the app's database and task queue with `env` on top; resolves once it polls. */
export function startWorkerProcess(
  app: Pick<TestApp, 'databaseUrl' | 'taskQueue'>,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  return startEntryPoint(WORKER_MAIN, 'is polling task queue', app, env);
}

/** Starts a second API process (`npm run api`) beside the app, on a free port; resolves once it listens. */
export async function startApiProcess(
  app: Pick<TestApp, 'databaseUrl' | 'taskQueue'>,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = await startEntryPoint(API_MAIN, 'Brigade API listening', app, { PORT: String(port), ...env });
  return { url: `http://127.0.0.1:${port}`, child };
}

/** SIGTERM, and its exit: a process that stops as an operator stops it. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** SIGKILL: no shutdown, no goodbye to Temporal; what a crashed machine looks like. */
export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
