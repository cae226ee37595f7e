// The web client's build (web/ -> web/dist). A stamp in the build records a hash of the sources it came
// from (src/api/web-build-state.ts), so `npm start` rebuilds a stale or missing build instead of serving it.
import fs from 'node:fs';
import path from 'node:path';
import { STAMP, WEB_ROOT, type WebBuildState, webBuildState, webSourceHash } from '../src/api/web-build-state.ts';

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
