// The real `npm run worker` entry point as a child process, for tests that kill a worker mid-work.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { temporalAddress, workflowBundlePath } from './harness.ts';
import type { TestApp } from './test-app.ts';

const WORKER_MAIN = new URL('../../bin/worker.ts', import.meta.url).pathname;

// A worker left running by a failed test would hold the test file's output pipes open, and the test runner
// would wait for it forever: whatever is still running when the file's process exits is killed with it.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts a worker on the app's database and task queue with `env` on top; resolves once it polls. */
export async function startWorkerProcess(
  app: Pick<TestApp, 'databaseUrl' | 'taskQueue'>,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WORKER_MAIN], {
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
      if (output.includes('is polling task queue')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before polling:\n${output}`)));
  });
  return child;
}

/** SIGKILL: no shutdown, no goodbye to Temporal; what a crashed machine looks like. */
export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
