import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isExecutable, runLogged, whichOnPath } from './executables.ts';
import { brigadeCacheDir } from './temporal-binary.ts';

// The cluster shape's native parts, built from source with Go the way the `temporal` CLI is (temporal-binary.ts)
// and cached next to it in ~/.cache/brigade/bin. The server and its schema tool must be the same version, and the
// PostgreSQL schema files come from that version's module. Nothing of this lands in the repository.
// v1.32: Worker Deployment Versioning with upgrade on continue-as-new, which the upgrade procedure relies on
// (docs/operations.md#upgrades). v1.32.2's go.mod asks for Go 1.26.10; .1 builds with the 1.26.8 here.
export const TEMPORAL_SERVER_VERSION = 'v1.32.1';
export const UI_SERVER_VERSION = 'v2.42.1';

export interface ClusterBinarySpec {
  /** file name in the cache's bin directory */
  name: string;
  /** what `go install` builds */
  module: string;
  what: string;
}

export const CLUSTER_BINARIES = {
  // The version is in the file name, so that a cache holding an older build is never taken for this one.
  server: {
    name: `temporal-server-${TEMPORAL_SERVER_VERSION}`,
    module: `go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}`,
    what: 'the Temporal server',
  },
  sqlTool: {
    name: `temporal-sql-tool-${TEMPORAL_SERVER_VERSION}`,
    module: `go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
    what: "the Temporal server's SQL schema tool",
  },
  ui: {
    name: `temporal-ui-server-${UI_SERVER_VERSION}`,
    module: `github.com/temporalio/ui-server/v2/cmd/server@${UI_SERVER_VERSION}`,
    what: 'the Temporal Web UI server',
  },
} as const satisfies Record<string, ClusterBinarySpec>;

export interface ClusterBinaries {
  server: string;
  sqlTool: string;
  ui: string;
  /** schema/postgresql/v12 of the server's module: `temporal/versioned` and `visibility/versioned` */
  schemaDir: string;
}

export class ClusterBinaryError extends Error {
  override name = 'ClusterBinaryError';
}

const EXE = process.platform === 'win32' ? '.exe' : '';

/**
 * The cluster's binaries and schema, building whatever is missing (in parallel would only fight over two
 * cores and the Go build cache, so one after another). A first build takes several minutes.
 */
export async function ensureClusterBinaries(
  opts: { log?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<ClusterBinaries> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const binDir = path.join(brigadeCacheDir(env), 'bin');
  const found: Partial<Record<keyof typeof CLUSTER_BINARIES, string>> = {};
  for (const [key, spec] of Object.entries(CLUSTER_BINARIES) as [keyof typeof CLUSTER_BINARIES, ClusterBinarySpec][]) {
    found[key] = await ensureBinary(spec, binDir, env, log);
  }
  const schemaDir = await ensureSchema(brigadeCacheDir(env), env, log);
  return { server: found.server!, sqlTool: found.sqlTool!, ui: found.ui!, schemaDir };
}

async function ensureBinary(spec: ClusterBinarySpec, binDir: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<string> {
  const target = path.join(binDir, `${spec.name}${EXE}`);
  if (await isExecutable(target)) return target;
  const go = await goBinary(env);
  log(`cluster: building ${spec.what} with Go into ${binDir} (first run only; takes a few minutes)`);
  // Every Go main is called after its directory ("server"); build into a private directory, then rename,
  // so that a concurrent start never sees a half-written file.
  const buildDir = path.join(binDir, `.build-${spec.name}-${process.pid}`);
  await fs.mkdir(buildDir, { recursive: true });
  try {
    const started = Date.now();
    await runLogged(go, ['install', spec.module], { ...env, GOBIN: buildDir, GOFLAGS: env.GOFLAGS ?? '-mod=mod' }, log);
    const built = (await fs.readdir(buildDir)).find((name) => !name.startsWith('.'));
    if (!built) throw new ClusterBinaryError(`go install ${spec.module} finished but wrote nothing into ${buildDir}`);
    await fs.rename(path.join(buildDir, built), target);
    log(`cluster: built ${spec.name} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return target;
  } catch (error) {
    if (error instanceof ClusterBinaryError) throw error;
    throw new ClusterBinaryError(
      `Could not build ${spec.what} (go install ${spec.module}): ${(error as Error).message}\n` +
        `Build it yourself and put it at ${target}, or run Brigade against a Temporal you run (TEMPORAL_ADDRESS).`,
    );
  } finally {
    await fs.rm(buildDir, { recursive: true, force: true });
  }
}

/** Copies schema/postgresql/v12 of the server's module (from Go's module cache) into our cache, once. */
async function ensureSchema(cacheDir: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<string> {
  const target = path.join(cacheDir, 'temporal-schema', TEMPORAL_SERVER_VERSION, 'postgresql', 'v12');
  if ((await exists(path.join(target, 'temporal', 'versioned'))) && (await exists(path.join(target, 'visibility', 'versioned'))))
    return target;
  const go = await goBinary(env);
  const module = `go.temporal.io/server@${TEMPORAL_SERVER_VERSION}`;
  log(`cluster: fetching the PostgreSQL schema of ${module} from the Go module cache`);
  let output = '';
  await runLogged(
    go,
    ['mod', 'download', '-json', module],
    { ...env, GOFLAGS: env.GOFLAGS ?? '-mod=mod' },
    () => undefined,
    (text) => (output += text),
  );
  const dir = (JSON.parse(output) as { Dir?: string }).Dir;
  if (!dir) throw new ClusterBinaryError(`go mod download ${module} did not say where the module is`);
  const source = path.join(dir, 'schema', 'postgresql', 'v12');
  const staging = `${target}.${process.pid}`;
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(path.dirname(target), { recursive: true });
  await fs.cp(source, staging, { recursive: true });
  // The module cache is read-only, and so would our copy be: a later clean-up could not delete it.
  await makeWritable(staging);
  await fs.rm(target, { recursive: true, force: true });
  await fs.rename(staging, target);
  return target;
}

async function makeWritable(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(file);
    else await fs.chmod(file, 0o644);
  }
}

async function goBinary(env: NodeJS.ProcessEnv): Promise<string> {
  const go = await whichOnPath(`go${EXE}`, env);
  if (go) return go;
  throw new ClusterBinaryError(
    'The cluster shape builds the Temporal server, its SQL tool and the Web UI server from source, which needs Go (https://go.dev/dl/) on the PATH.',
  );
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}
