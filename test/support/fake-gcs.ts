// fake-gcs-server (github.com/fsouza/fake-gcs-server), the GCS emulator the storage tests run the real
// @google-cloud/storage client against. The binary is built with Go into the Brigade cache when it is
// missing (as the Temporal CLI is); `.ci/run` builds it ahead of the tests with `node test/support/fake-gcs.ts`.
//
//   const gcs = await startFakeGcs();           // in-memory, on a free loopback port
//   await gcs.createBucket('recipes-test');
//   ... STORAGE_EMULATOR_HOST: gcs.url, GCS_BUCKET_NAME: 'recipes-test' ...
//   await gcs.stop();
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { isExecutable, runLogged } from '../../stack/executables.ts';
import { freePort } from '../../stack/ports.ts';
import { brigadeCacheDir } from '../../stack/temporal-binary.ts';

export const FAKE_GCS_MODULE = 'github.com/fsouza/fake-gcs-server@v1.55.1';

export async function ensureFakeGcsBinary(log: (line: string) => void = () => undefined): Promise<string> {
  if (process.env.FAKE_GCS_SERVER_PATH) return process.env.FAKE_GCS_SERVER_PATH;
  const binDir = path.join(brigadeCacheDir(), 'bin');
  const binary = path.join(binDir, 'fake-gcs-server');
  if (await isExecutable(binary)) return binary;
  log(`fake-gcs-server: building ${FAKE_GCS_MODULE} with Go into ${binDir} (first run only; a few minutes)`);
  try {
    await runLogged('go', ['install', FAKE_GCS_MODULE], { ...process.env, GOBIN: binDir }, log);
  } catch (error) {
    throw new Error(`Could not build fake-gcs-server (go install ${FAKE_GCS_MODULE}): ${(error as Error).message}`);
  }
  if (!(await isExecutable(binary))) throw new Error(`go install ${FAKE_GCS_MODULE} finished, but ${binary} is missing`);
  return binary;
}

export interface FakeGcs {
  /** pass as STORAGE_EMULATOR_HOST */
  url: string;
  createBucket(name: string): Promise<void>;
  /** the names of a bucket's objects, sorted */
  list(bucket: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startFakeGcs(): Promise<FakeGcs> {
  const binary = await ensureFakeGcsBinary();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    ['-scheme', 'http', '-backend', 'memory', '-host', '127.0.0.1', '-port', String(port), '-log-level', 'error'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`fake-gcs-server exited with ${child.exitCode}: ${stderr}`);
    try {
      const response = await fetch(`${url}/storage/v1/b?project=test`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`fake-gcs-server did not answer on ${url} within 15 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async createBucket(name) {
      const response = await fetch(`${url}/storage/v1/b?project=test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      if (!response.ok) throw new Error(`creating bucket ${name}: ${response.status} ${await response.text()}`);
    },
    async list(bucket) {
      const response = await fetch(`${url}/storage/v1/b/${encodeURIComponent(bucket)}/o`);
      const body = (await response.json()) as { items?: { name: string }[] };
      return (body.items ?? []).map((item) => item.name).sort();
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// `node test/support/fake-gcs.ts`: make sure the binary is there (CI runs this before the tests).
if (import.meta.main) {
  ensureFakeGcsBinary((line) => console.error(line)).then(
    (binary) => console.log(binary),
    (error: unknown) => {
      console.error((error as Error).message);
      process.exit(1);
    },
  );
}
