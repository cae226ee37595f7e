// `npm run worker` with METRICS_PORT: GET /metrics on a port of its own, with Brigade's metrics and the
// Temporal SDK's own (the worker Runtime's Prometheus exporter), for a worker that runs without an API.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { freePort } from '../../stack/ports.ts';
import { freshDatabase, temporalAddress, uniqueTaskQueue, workflowBundlePath } from '../support/harness.ts';

const stops: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const stop of stops.reverse()) await stop();
});

test('a worker alone serves brigade_* and temporal_* metrics on METRICS_PORT', { timeout: 150_000 }, async () => {
  const database = await freshDatabase();
  stops.push(() => database.drop());
  const taskQueue = uniqueTaskQueue('metrics');
  // the port is free when picked, but a test in another file may bind it first: a worker that says so starts again
  // on another, since what is tested is the listener, not the port it happened to get
  let started: Awaited<ReturnType<typeof startWorker>> | undefined;
  for (let attempt = 1; !started; attempt++) {
    const candidate = await startWorker(database.url, taskQueue);
    if (candidate.text !== undefined || attempt >= 3 || !/EADDRINUSE/.test(candidate.output())) started = candidate;
  }
  const { port, worker, exited, output } = started;
  if (started.text === undefined) assert.fail(`the worker exited: ${output()}`);
  const text = started.text;
  assert.match(text, /^# TYPE brigade_turns_total counter$/m, output());
  assert.match(text, /^# TYPE brigade_process_cpu_seconds_total counter$/m);
  assert.match(text, /^temporal_\w+/m, 'the SDK metrics are appended');
  // a model step holds its workflow task's slot while it runs: 200 turns at once, not the SDK's 40 (stack/worker.ts)
  for (const type of ['WorkflowWorker', 'LocalActivityWorker']) {
    assert.match(text, new RegExp(`^temporal_worker_task_slots_available\\{[^}]*worker_type="${type}"[^}]*\\} 200$`, 'm'), type);
  }
  assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
  worker.kill('SIGTERM');
  assert.equal(await exited, 0, output());
  // a prebuilt bundle carries its workflow interceptor modules: naming them again only made the SDK warn
  assert.doesNotMatch(output(), /Ignoring WorkerOptions\.interceptors\.workflowModules/);
});

/** `npm run worker` with METRICS_PORT, waited for until its /metrics has the SDK's slots; `text` is unset if it exited. */
async function startWorker(databaseUrl: string, taskQueue: string) {
  const port = await freePort();
  const worker = spawn(process.execPath, ['bin/worker.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKFLOW_BUNDLE_PATH: workflowBundlePath(),
      METRICS_PORT: String(port),
      LOG_LEVEL: 'warn',
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  worker.stdout.on('data', (chunk) => (output += chunk));
  worker.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
  stops.push(async () => {
    if (worker.exitCode === null) worker.kill('SIGTERM');
    await exited;
  });

  const deadline = Date.now() + 120_000;
  let text = '';
  while (Date.now() < deadline) {
    if (worker.exitCode !== null) return { port, worker, exited, output: () => output, text: undefined };
    try {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      text = await response.text();
      if (response.ok && /^temporal_worker_task_slots_available\{[^}]*LocalActivityWorker/m.test(text)) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { port, worker, exited, output: () => output, text };
}
