// Finding and running the executables Brigade builds or borrows (the temporal CLI, the Temporal server and
// its tools, Go itself): one place for "is it there" and for running a build with its output logged.
import { spawn } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';

export async function isExecutable(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return false;
    await fs.access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function whichOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Runs a build tool, logging each output line (prefixed `go: `); a failure names the exit code and the last
 * lines. `onStdout` takes stdout instead of the log, for a command whose output is its answer.
 */
export function runLogged(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  onStdout?: (text: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-2_000);
      for (const line of text.split('\n')) if (line.trim()) log(`go: ${line}`);
    };
    child.stdout.on('data', onStdout ? (chunk: Buffer) => onStdout(chunk.toString()) : onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`exit code ${code}: ${tail.trim().split('\n').slice(-3).join(' ')}`)),
    );
  });
}
