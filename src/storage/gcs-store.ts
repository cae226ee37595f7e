// Objects in a GCS bucket through @google-cloud/storage. STORAGE_EMULATOR_HOST points it at an emulator
// (fake-gcs-server in the tests). The client retries nothing: Temporal's activity retries own backoff.
import { Storage } from '@google-cloud/storage';
import { type ObjectStore, checkKey, checkPrefix } from './object-store.ts';

export interface GcsStoreOptions {
  bucket: string;
  /** an emulator's URL (http://127.0.0.1:4443); without it, the real GCS with application default credentials */
  emulatorHost?: string;
}

export function createGcsStore({ bucket, emulatorHost }: GcsStoreOptions): ObjectStore {
  const emulator = emulatorHost?.replace(/\/+$/, '');
  const storage = new Storage({
    ...(emulator ? { apiEndpoint: emulator, projectId: 'brigade-emulator' } : {}),
    retryOptions: { autoRetry: false, maxRetries: 0 },
  });
  // With STORAGE_EMULATOR_HOST in the environment the library takes it verbatim as its JSON API base, without
  // the /storage/v1 that emulators (fake-gcs-server) serve it under; set the base from the one setting instead.
  if (emulator) storage.baseUrl = `${emulator}/storage/v1`;
  const objects = storage.bucket(bucket);
  return {
    kind: 'gcs',
    async put(key, data, contentType) {
      // Small objects: one multipart request instead of a resumable session (nothing to resume, one round trip).
      await objects.file(checkKey(key)).save(Buffer.from(data), { resumable: false, contentType, validation: 'crc32c' });
    },
    async get(key) {
      try {
        const [data] = await objects.file(checkKey(key)).download();
        return data;
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    },
    async delete(key) {
      await objects.file(checkKey(key)).delete({ ignoreNotFound: true });
    },
    async deletePrefix(prefix) {
      await objects.deleteFiles({ prefix: checkPrefix(prefix), force: true });
    },
    publicUrl(key) {
      checkKey(key);
      // GCS: the public object URL (the bucket grants allUsers read; see the README). An emulator: its media
      // download URL, which needs no credentials there.
      return emulator
        ? `${emulator}/download/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(key)}?alt=media`
        : `https://storage.googleapis.com/${encodeURIComponent(bucket)}/${key}`;
    },
  };
}
