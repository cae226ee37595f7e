// The embedded default: objects are files under DATA_DIR/objects, served by the API at /files/<key>.
// A write goes to a temporary file first and is renamed into place, so a reader never sees half an image.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type ObjectStore, checkKey, checkPrefix } from './object-store.ts';

export interface LocalStoreOptions {
  /** the folder that holds the objects (DATA_DIR/objects) */
  root: string;
  /** where browsers reach the API: PUBLIC_URL, or http://HOST:PORT */
  publicBaseUrl: string;
}

export function createLocalStore({ root, publicBaseUrl }: LocalStoreOptions): ObjectStore {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return {
    kind: 'local',
    async put(key, data) {
      const file = localPath(root, key);
      // the owner's alone, whatever the process's umask: an image belongs to one user's conversation
      await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      await fs.writeFile(temporary, data, { mode: 0o600 });
      await fs.rename(temporary, file);
    },
    async get(key) {
      try {
        return await fs.readFile(localPath(root, key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async delete(key) {
      await fs.rm(localPath(root, key), { force: true });
    },
    async deletePrefix(prefix) {
      await fs.rm(path.dirname(localPath(root, `${checkPrefix(prefix)}x`)), { recursive: true, force: true });
    },
    publicUrl(key) {
      return `${base}/files/${checkKey(key)}`;
    },
  };
}

/** The file of a key, never outside the root. */
export function localPath(root: string, key: string): string {
  const resolvedRoot = path.resolve(root);
  const file = path.resolve(resolvedRoot, checkKey(key));
  if (!file.startsWith(`${resolvedRoot}${path.sep}`)) throw new Error(`Invalid object key "${key.slice(0, 100)}"`);
  return file;
}
