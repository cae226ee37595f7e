// The real `npm run worker` entry point in a child process, for tests that kill it mid-work.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { temporalAddress, workflowBundlePath } from './harness.ts';

const WORKER_MAIN = new URL('../../src/worker-main.ts', import.meta.url).pathname;

/** Starts a worker with `env` on the test app's database and task queue; resolves once it polls. */
export async function startWorkerProcess(app: { databaseUrl: string; taskQueue: string }, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WORKER_MAIN], {
    env: {
      PATH: process.env.PATH,
      ...env,
      DATABASE_URL: app.databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: app.taskQueue,
      WORKFLOW_BUNDLE_PATH: workflowBundlePath(),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
