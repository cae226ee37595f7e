import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { isPortFree } from './ports.ts';

export type SearchAttributeType = 'Keyword' | 'Bool' | 'Text' | 'Int' | 'Double' | 'Datetime' | 'KeywordList';

export interface TemporalDevServerOptions {
  binary: string;
  port: number;
  uiPort: number;
  /** History file; without one, history lives in memory and dies with the server (tests). */
  dbFile?: string;
  namespace: string;
  searchAttributes: Record<string, SearchAttributeType>;
  /** No Web UI (tests). */
  headless?: boolean;
  /** Where to keep the server's pid while it runs, so that a start after a crash can find it (stack/leftovers.ts). */
  pidFile?: string;
  log?: (line: string) => void;
  /** Called when the server exits after a successful start without stop() having been called. */
  onUnexpectedExit?: (reason: string) => void;
}

export interface TemporalDevServer {
  /** gRPC frontend, `127.0.0.1:<port>`. */
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

/**
 * How the history file is written. SQLite's default (a rollback journal, synchronous=FULL) fsyncs the journal and
 * the file on every commit: the dev server's one shard commits several times per turn, so a turn waited on the
 * disk (bare Temporal 29 turns/s, Brigade 26 on 2 cores). With a write-ahead log and synchronous=NORMAL a commit
 * is an append to the -wal file with no fsync; the log is fsynced when it is checkpointed into the file (every
 * ~1000 pages). Bare 90, Brigade 59-66 turns/s, the same as the in-memory server within noise.
 * What it can cost: a crash of Brigade or of the Temporal process loses nothing (the appended log is in the
 * kernel's page cache and is replayed on the next start). A power loss or a kernel crash can lose the
 * transactions committed since the last checkpoint, up to a few seconds of workflow progress, and leaves the file
 * consistent (never corrupt): workflows resume from the last state that reached the disk, and activities whose
 * completion was lost run again (they are idempotent, as every retry requires). synchronous=OFF would also
 * skip the checkpoint's fsync, and a power loss could then corrupt the file: not worth its few per cent.
 */
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

export class TemporalDevServerError extends Error {
  override name = 'TemporalDevServerError';
}

const fail = (reason: string) => new TemporalDevServerError(`Temporal dev server could not start: ${reason}`);

export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const log = opts.log ?? (() => undefined);
  if (!(await isPortFree(opts.port, HOST))) {
    throw fail(`port ${opts.port} is in use; set TEMPORAL_DEV_PORT, or TEMPORAL_ADDRESS to use a running Temporal`);
  }
  if (!opts.headless && !(await isPortFree(opts.uiPort, HOST))) {
    throw fail(`the Web UI port ${opts.uiPort} is in use; set TEMPORAL_UI_PORT`);
  }

  const args = [
    'server',
    'start-dev',
    '--ip',
    HOST,
    '--port',
    String(opts.port),
    ...(opts.headless ? ['--headless'] : ['--ui-port', String(opts.uiPort)]),
    ...(opts.dbFile ? ['--db-filename', opts.dbFile, ...SQLITE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma])] : []),
    // "default" always exists; naming it again is harmless, other namespaces are created here.
    '--namespace',
    opts.namespace,
    ...Object.entries(opts.searchAttributes).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    '--log-level',
    'warn',
    // The dev server's one history shard reads its task queue at most 20 times a second by default, so every
    // workflow and activity task waited ~30 ms to be dispatched (a lone lookup turn: 300 ms; at 200/s ~70 ms).
    // At 2000/s the wait is under a millisecond: a lone turn 50-72 -> 44-50 ms, and no more CPU per turn.
    '--dynamic-config-value',
    'history.transferProcessorMaxPollRPS=2000',
    // Activities scheduled by a workflow task come back in the completion's reply, skipping a matching trip.
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
    // Our flags are the whole configuration: a developer's ~/.config/temporalio or TEMPORAL_* env must not leak in.
    '--disable-config-file',
    '--disable-config-env',
  ];
  const child = spawn(opts.binary, args, {
    // Its own process group: a Ctrl-C in the terminal reaches us, and we stop Temporal after the worker drained.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => child.exitCode === null && child.kill('SIGTERM');
  process.on('exit', killOnExit);
  if (opts.pidFile && child.pid) await fs.writeFile(opts.pidFile, `${child.pid}\n`, { mode: 0o600 });

  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line.trim()) continue;
        log(`temporal: ${line}`);
        tail.push(line);
        if (tail.length > 20) tail.shift();
      }
    });
  }

  const address = `${HOST}:${opts.port}`;
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await stopChild(child);
    process.off('exit', killOnExit);
    if (opts.pidFile) await fs.rm(opts.pidFile, { force: true });
  };
  try {
    await waitUntilServing(child, address, opts.namespace, tail, opts);
  } catch (error) {
    await stop();
    throw error;
  }
  log(`temporal: dev server ready on ${address}`);
  if (opts.dbFile) await ownerOnly(opts.dbFile);
  child.once('exit', (code, signal) => {
    if (!stopping) opts.onUnexpectedExit?.(`the Temporal dev server exited (${signal ?? `code ${code}`})`);
  });
  return { address, uiUrl: opts.headless ? '' : `http://${HOST}:${opts.uiPort}`, stop };
}

/**
 * The history file holds every conversation in plain text: the owner's alone. The server creates it under
 * the umask it inherits (077 in Brigade's processes, stack/private-data.ts); one an older version wrote
 * world-readable, with its WAL and shared-memory files, is tightened here.
 */
async function ownerOnly(dbFile: string): Promise<void> {
  for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`, `${dbFile}-journal`]) {
    await fs.chmod(file, 0o600).catch(() => undefined);
  }
}

async function waitUntilServing(child: ChildProcess, address: string, namespace: string, tail: string[], opts: TemporalDevServerOptions) {
  // 'close' rather than 'exit': by then the last lines of output, which say why, have been read.
  let exited = false;
  child.once('close', () => (exited = true));
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const deadline = Date.now() + START_TIMEOUT_MS;
  let lastError = '';
  while (Date.now() < deadline) {
    if (spawnError) throw fail(`${opts.binary}: ${spawnError.message}`);
    if (exited) throw explainExit(tail, opts);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        // The namespace is registered a moment after the frontend answers.
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = (error as Error).message;
    }
    await sleep(200);
  }
  throw fail(`no answer on ${address} after ${START_TIMEOUT_MS / 1000} s (${lastError})`);
}

function explainExit(tail: string[], opts: TemporalDevServerOptions): Error {
  const text = tail.join('\n');
  if (/address already in use/i.test(text)) {
    const port = new RegExp(`:${opts.uiPort}\\b`).test(text) && !new RegExp(`:${opts.port}\\b`).test(text) ? opts.uiPort : opts.port;
    return port === opts.uiPort
      ? fail(`the Web UI port ${opts.uiPort} is in use; set TEMPORAL_UI_PORT`)
      : fail(`port ${opts.port} is in use; set TEMPORAL_DEV_PORT, or TEMPORAL_ADDRESS to use a running Temporal`);
  }
  const last = tail.filter((line) => /error|fatal|panic/i.test(line)).at(-1) ?? tail.at(-1) ?? 'it exited without output';
  return fail(last.trim());
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
