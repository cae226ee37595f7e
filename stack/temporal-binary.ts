import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isExecutable, runLogged, whichOnPath } from './executables.ts';

// Later tags carry a `replace` directive in go.mod, which `go install pkg@version` refuses.
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

const EXE = process.platform === 'win32' ? '.exe' : '';

export class TemporalBinaryError extends Error {
  override name = 'TemporalBinaryError';
}

/** `$BRIGADE_CACHE_DIR`, else `$XDG_CACHE_HOME/brigade`, else `~/.cache/brigade`. */
export function brigadeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.BRIGADE_CACHE_DIR) return path.resolve(env.BRIGADE_CACHE_DIR);
  return path.join(env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache'), 'brigade');
}

/** Fetches a prebuilt CLI into `target`; rejects with the reason when it cannot (no package, no network). */
export type CliDownload = (binDir: string, target: string, log: (line: string) => void) => Promise<string>;

/** How long a download may take before the Go build is tried instead (a network that hangs rather than refuses). */
export const DOWNLOAD_TIMEOUT_MS = 120_000;

/**
 * Finds the `temporal` CLI (which runs the dev server), cheapest source first: the configured path, the
 * PATH, our cache, a prebuilt download by `@temporalio/testing` (seconds, where the internet is there),
 * and last a Go build into the cache (minutes, from the Go module proxy).
 */
export async function findTemporalBinary(
  opts: { cliPath?: string; log?: (line: string) => void; env?: NodeJS.ProcessEnv; download?: CliDownload } = {},
): Promise<string> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const download = opts.download ?? downloadWithTestingPackage;

  if (opts.cliPath) {
    const configured = path.resolve(opts.cliPath);
    if (await isExecutable(configured)) return configured;
    throw new TemporalBinaryError(`TEMPORAL_CLI_PATH is set to ${opts.cliPath}, which is not an executable file`);
  }

  const onPath = await whichOnPath(`temporal${EXE}`, env);
  if (onPath) return onPath;

  const binDir = path.join(brigadeCacheDir(env), 'bin');
  const cached = path.join(binDir, `temporal${EXE}`);
  if (await isExecutable(cached)) return cached;

  const tried: string[] = [`TEMPORAL_CLI_PATH (unset)`, `"temporal" on the PATH (absent)`, `${cached} (absent)`];

  try {
    return await withTimeout(download(binDir, cached, log), DOWNLOAD_TIMEOUT_MS, 'the download did not finish');
  } catch (error) {
    tried.push(`downloading with @temporalio/testing (${(error as Error).message})`);
  }

  const go = await whichOnPath(`go${EXE}`, env);
  if (go) {
    log(`temporal: building the Temporal CLI with Go into ${binDir} (first run only; takes a few minutes)`);
    try {
      await runLogged(go, ['install', TEMPORAL_CLI_MODULE], { ...env, GOBIN: binDir }, log);
      if (await isExecutable(cached)) return cached;
      tried.push(`go install ${TEMPORAL_CLI_MODULE} (finished, but ${cached} is missing)`);
    } catch (error) {
      tried.push(`go install ${TEMPORAL_CLI_MODULE} (${(error as Error).message})`);
    }
  } else {
    tried.push('building with Go (go is not on the PATH)');
  }

  throw new TemporalBinaryError(
    [
      'The Temporal CLI (which runs the local Temporal dev server) was not found. Tried:',
      ...tried.map((line) => `  - ${line}`),
      'Fix one of: install the temporal CLI (https://docs.temporal.io/cli) and put it on the PATH or set TEMPORAL_CLI_PATH;',
      `install Go and run npm start again; reinstall with optional dependencies (npm ci --include=optional) on a machine with internet;`,
      'or point TEMPORAL_ADDRESS at a running Temporal server.',
    ].join('\n'),
  );
}

/** The CLI version a download asks for: the one the Go build makes, so both paths run the same dev server. */
export const TEMPORAL_CLI_VERSION = TEMPORAL_CLI_MODULE.split('@v')[1]!;

/** The SDK's test package downloads the CLI when it starts a dev server; we start one once and keep the file. */
async function downloadWithTestingPackage(binDir: string, target: string, log: (line: string) => void): Promise<string> {
  const moduleName = '@temporalio/testing'; // an optional dependency: a variable keeps the import optional
  let testing: { TestWorkflowEnvironment: { createLocal(options: unknown): Promise<{ teardown(): Promise<void> }> } };
  try {
    testing = await import(moduleName);
  } catch {
    throw new Error('the optional package is not installed; npm ci --include=optional installs it');
  }
  const downloadDir = path.join(binDir, 'download');
  await fs.mkdir(downloadDir, { recursive: true });
  log(`temporal: downloading the Temporal CLI with @temporalio/testing into ${downloadDir}`);
  const environment = await testing.TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir, version: TEMPORAL_CLI_VERSION } },
  });
  await environment.teardown();
  for (const name of await fs.readdir(downloadDir)) {
    const file = path.join(downloadDir, name);
    if (!name.endsWith('.downloading') && (await isExecutable(file))) {
      await fs.copyFile(file, target);
      await fs.chmod(target, 0o755);
      return target;
    }
  }
  throw new Error(`the download finished but no executable appeared in ${downloadDir}`);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
