import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

// One process of the cluster shape (the Temporal server, the Web UI server, a worker, the API), which the
// cluster starts, stops in order, and which drills kill and start again. Each runs in its own process group,
// so a Ctrl-C in the terminal reaches only `npm run cluster`, which then stops them in order.

export interface ManagedProcessSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** resolves once the process serves; `output()` is what it printed so far */
  ready(probe: { output(): string; exited(): boolean; pid: number | undefined }): Promise<void>;
  /** how long ready() may take */
  startTimeoutMs?: number;
  /** SIGTERM, then SIGKILL after this */
  stopTimeoutMs?: number;
  log?: (line: string) => void;
  onUnexpectedExit?: (reason: string) => void;
}

export class ClusterProcessError extends Error {
  override name = 'ClusterProcessError';
}

const KEEP_LINES = 20;

export class ManagedProcess {
  readonly name: string;
  private child: ChildProcess | undefined;
  private expectedExit = false;
  private tail: string[] = [];
  private text = '';
  private readonly killOnExit = () => this.child?.exitCode === null && this.child.kill('SIGKILL');

  private readonly spec: ManagedProcessSpec;

  constructor(spec: ManagedProcessSpec) {
    this.spec = spec;
    this.name = spec.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines it printed, for an error message. */
  lastLines(): string {
    return this.tail.join('\n');
  }

  async start(): Promise<void> {
    if (this.running) throw new ClusterProcessError(`${this.name} is already running`);
    this.expectedExit = false;
    this.text = '';
    const child = spawn(this.spec.command, this.spec.args, {
      env: this.spec.env,
      cwd: this.spec.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    process.on('exit', this.killOnExit);
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      let partial = '';
      stream.on('data', (chunk: string) => {
        // Only the start-up output is searched; later output is logged and kept as a tail.
        if (this.text.length < 200_000) this.text += chunk;
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.trim()) continue;
          this.spec.log?.(line);
          this.tail.push(line.length > 600 ? `${line.slice(0, 600)}...` : line);
          if (this.tail.length > KEEP_LINES) this.tail.shift();
        }
      });
    }
    let exited = false;
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    child.once('exit', (code, signal) => {
      exited = true;
      process.off('exit', this.killOnExit);
      if (!this.expectedExit) this.spec.onUnexpectedExit?.(`${this.name} exited (${signal ?? `code ${code}`})`);
    });

    const timeoutMs = this.spec.startTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    const probe = { output: () => this.text, exited: () => exited || !!spawnError, pid: child.pid };
    const ready = this.spec.ready(probe);
    ready.catch(() => undefined);
    for (;;) {
      if (spawnError) throw new ClusterProcessError(`${this.name} could not start: ${spawnError.message}`);
      if (exited) {
        // give the pipes a moment so the reason is in the tail
        await sleep(100);
        throw new ClusterProcessError(`${this.name} exited while starting:\n${this.lastLines()}`);
      }
      const settled = await Promise.race([
        ready.then(
          () => 'ready' as const,
          (error: Error) => error,
        ),
        sleep(100).then(() => 'wait' as const),
      ]);
      if (settled === 'ready') return;
      if (settled instanceof Error) {
        await this.stop();
        throw new ClusterProcessError(`${this.name} did not become ready: ${settled.message}\n${this.lastLines()}`);
      }
      if (Date.now() > deadline) {
        await this.stop();
        throw new ClusterProcessError(`${this.name} was not ready after ${timeoutMs / 1000} s:\n${this.lastLines()}`);
      }
    }
  }

  /** A clean stop: SIGTERM (the process drains), SIGKILL if it takes too long. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM', this.spec.stopTimeoutMs ?? 15_000);
  }

  /** Sudden death, as a crash or an OOM kill would be. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL', 5_000);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async signal(signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.expectedExit = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }
}

/** Polls `check` until it resolves true; the last error explains a timeout. */
export async function pollUntil(check: () => Promise<boolean>, opts: { everyMs?: number; timeoutMs: number; what: string }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline)
      throw new ClusterProcessError(`${opts.what} not ready after ${opts.timeoutMs / 1000} s${last ? ` (${last})` : ''}`);
    await sleep(opts.everyMs ?? 200);
  }
}
