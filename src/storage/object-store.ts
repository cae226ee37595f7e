// Where agents keep files (recipe images): one small interface, two implementations (a local folder the API
// serves, and a GCS bucket). Keys are paths such as `<prefix>/<uuid>.png`; writes overwrite, so a retried
// upload is harmless.

export interface ObjectStore {
  /** `local` or `gcs`, for logs and the README's words */
  readonly kind: string;
  /** writes (or overwrites) the object */
  put(key: string, data: Uint8Array, contentType: string): Promise<void>;
  /** the object's bytes, or undefined when there is none */
  get(key: string): Promise<Uint8Array | undefined>;
  /** removes the object; no error when it is already gone */
  delete(key: string): Promise<void>;
  /** removes every object under `prefix` (a folder: `<a>/<b>/`); none there is fine */
  deletePrefix(prefix: string): Promise<void>;
  /** the URL a browser loads the object from, without a bearer header */
  publicUrl(key: string): string;
}

/** Keys are made by the code from uuids; anything else is refused before it reaches a path or a URL. */
const KEY = /^[a-z0-9][a-z0-9_-]*(?:\/[a-z0-9][a-z0-9_.-]*)+$/i;

export function checkKey(key: string): string {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`Invalid object key "${key.slice(0, 100)}"`);
  return key;
}

/** A folder of keys (`<a>/<b>/`), checked like a key. */
export function checkPrefix(prefix: string): string {
  if (!prefix.endsWith('/')) throw new Error(`Invalid object prefix "${prefix.slice(0, 100)}"`);
  checkKey(`${prefix}x`);
  return prefix;
}
