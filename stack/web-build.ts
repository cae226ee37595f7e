// The web client's build (web/ -> web/dist) and whether it is current. A stamp in the build records a
// hash of the sources it came from, so `npm start` rebuilds a stale or missing build instead of serving it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../web');
export const WEB_DIST = path.join(WEB_ROOT, 'dist');
const STAMP = '.brigade-build-stamp';
/** What the build's output depends on besides web/src: a change to any of these is a rebuild. */
const INPUTS = ['index.html', 'vite.config.ts', 'src', 'public'];

function listFiles(entry: string): string[] {
  if (!fs.existsSync(entry)) return [];
  if (!fs.statSync(entry).isDirectory()) return [entry];
  return fs
    .readdirSync(entry)
    .sort()
    .flatMap((name) => listFiles(path.join(entry, name)));
}

/** undefined when the sources are not here (an image that ships only the build). */
export function webSourceHash(root = WEB_ROOT): string | undefined {
  const files = INPUTS.flatMap((input) => listFiles(path.join(root, input)));
  if (files.length === 0) return undefined;
  const hash = createHash('sha256');
  for (const file of files) hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

export type WebBuildState = 'current' | 'stale' | 'missing' | 'no-sources';

export function webBuildState(root = WEB_ROOT): WebBuildState {
  const dist = path.join(root, 'dist');
  const built = fs.existsSync(path.join(dist, 'index.html'));
  const sources = webSourceHash(root);
  if (!sources) return built ? 'current' : 'missing';
  if (!built) return 'missing';
  const stamp = fs.existsSync(path.join(dist, STAMP)) ? fs.readFileSync(path.join(dist, STAMP), 'utf8').trim() : '';
  return stamp === sources ? 'current' : 'stale';
}

/**
 * Builds with Vite's JS API when the build is stale or missing. It builds into a fresh folder and swaps it
 * in, so a server (or a second test file) never reads a half-written build.
 */
export async function ensureWebBuild(log: (line: string) => void = () => undefined, root = WEB_ROOT): Promise<WebBuildState> {
  const state = webBuildState(root);
  if (state === 'current' || state === 'no-sources') return state;
  const sources = webSourceHash(root)!;
  log(`Building the web client (${state === 'missing' ? 'no build yet' : 'sources changed'})...`);
  const started = Date.now();
  const { build } = await import('vite');
  const dist = path.join(root, 'dist');
  const next = `${dist}.next-${process.pid}-${Date.now()}`;
  await build({
    root,
    configFile: path.join(root, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: next, emptyOutDir: true },
  });
  fs.writeFileSync(path.join(next, STAMP), `${sources}\n`);
  const old = `${dist}.old-${process.pid}-${Date.now()}`;
  if (fs.existsSync(dist)) fs.renameSync(dist, old);
  fs.renameSync(next, dist);
  fs.rmSync(old, { recursive: true, force: true });
  log(`Built the web client in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  return state;
}

// `npm run build:web`, and the project's postinstall (where, installed without dev dependencies, Vite is
// absent: then it says so and leaves the build to the image or machine that has them).
if (import.meta.main) {
  const postinstall = process.argv.includes('--postinstall');
  try {
    if (postinstall) await import('vite');
  } catch {
    console.log('brigade: Vite is not installed (dev dependencies omitted); the web client is not built.');
    process.exit(0);
  }
  await ensureWebBuild(console.log);
}
