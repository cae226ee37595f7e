// Where the web client's build is (web/ -> web/dist) and whether it is current: a stamp in the build records a
// hash of the sources it came from. The API reads this to serve the build; stack/web-build.ts makes the build.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web');
export const WEB_DIST = path.join(WEB_ROOT, 'dist');
export const STAMP = '.brigade-build-stamp';
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
