// What a crashed `npm start` leaves behind. Its embedded PostgreSQL and Temporal dev server run in process groups
// of their own (so that a Ctrl-C reaches Brigade first and they stop last), which also means a `kill -9` of
// Brigade's group leaves both running on the DATA_DIR. The next start finds them by their pid files, checks that
// each is the service of this DATA_DIR and that the Brigade that started them is gone, and stops them; a Brigade
// still alive on the same DATA_DIR is refused in a sentence instead.
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** DATA_DIR/brigade.pid: the `npm start` process that owns the DATA_DIR's services. */
export const ownerPidFile = (dataDir: string) => path.join(dataDir, 'brigade.pid');
/** DATA_DIR/temporal.pid: the Temporal dev server that `npm start` started (PostgreSQL keeps its own postmaster.pid). */
export const temporalPidFile = (dataDir: string) => path.join(dataDir, 'temporal.pid');

const STOP_WAIT_MS = 15_000;

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

async function readPid(file: string): Promise<number | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  const pid = Number(text?.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The process's command line, or undefined when it is gone (or not ours to read, which a leftover of ours is). */
async function commandLine(pid: number): Promise<string | undefined> {
  const raw = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return raw?.split('\0').join(' ');
}

async function stop(pid: number, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return; // gone meanwhile
  }
  const deadline = Date.now() + STOP_WAIT_MS;
  while (Date.now() < deadline) {
    if ((await commandLine(pid)) === undefined) return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  while ((await commandLine(pid)) !== undefined) await sleep(50);
}

/**
 * Before a start on `dataDir`: refuses when another Brigade runs on it, stops the PostgreSQL and Temporal dev server
 * an earlier one left running, then records this process as the owner. Returns what it stopped, for the log.
 */
export async function reclaimDataDir(dataDir: string, dbFile: string): Promise<string[]> {
  const owner = await readPid(ownerPidFile(dataDir));
  if (owner && owner !== process.pid && /\bbin\/start\.ts\b/.test((await commandLine(owner)) ?? '')) {
    throw new DataDirInUseError(
      `Brigade (pid ${owner}) is already running with DATA_DIR ${dataDir}; stop it first, or set another DATA_DIR`,
    );
  }
  const stopped: string[] = [];
  const temporal = await readPid(temporalPidFile(dataDir));
  const temporalCommand = temporal ? await commandLine(temporal) : undefined;
  // a pid can be reused: only a dev server on this very history file is ours to stop
  if (temporal && temporalCommand?.includes('start-dev') && temporalCommand.includes(dbFile)) {
    await stop(temporal, 'SIGTERM');
    stopped.push(`the Temporal dev server (pid ${temporal})`);
  }
  const pgDir = path.join(dataDir, 'postgres');
  const postgres = await readPid(path.join(pgDir, 'postmaster.pid'));
  const postgresCommand = postgres ? await commandLine(postgres) : undefined;
  if (postgres && postgresCommand && /\bpostgres\b/.test(postgresCommand) && postgresCommand.includes(`-D ${pgDir}`)) {
    // fast shutdown: open transactions roll back, and the next start needs no crash recovery
    await stop(postgres, 'SIGINT');
    stopped.push(`PostgreSQL (pid ${postgres})`);
  }
  await fs.mkdir(dataDir, { recursive: true });
  await fs.writeFile(ownerPidFile(dataDir), `${process.pid}\n`, { mode: 0o600 });
  return stopped;
}

/** A clean stop: the DATA_DIR has no owner any more. */
export async function releaseDataDir(dataDir: string): Promise<void> {
  if ((await readPid(ownerPidFile(dataDir))) === process.pid) await fs.rm(ownerPidFile(dataDir), { force: true });
}
