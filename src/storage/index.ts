// GCS when GCS_BUCKET_NAME is set, otherwise a local folder under DATA_DIR served by the API.
import path from 'node:path';
import type { Config } from '../config.ts';
import { createGcsStore } from './gcs-store.ts';
import { createLocalStore } from './local-store.ts';
import type { ObjectStore } from './object-store.ts';

export type { ObjectStore } from './object-store.ts';

export type StoreConfig = Pick<Config, 'GCS_BUCKET_NAME' | 'STORAGE_EMULATOR_HOST' | 'DATA_DIR' | 'PUBLIC_URL' | 'HOST' | 'PORT'>;

export function createObjectStore(config: StoreConfig): ObjectStore {
  if (config.GCS_BUCKET_NAME) {
    return createGcsStore({
      bucket: config.GCS_BUCKET_NAME,
      ...(config.STORAGE_EMULATOR_HOST ? { emulatorHost: config.STORAGE_EMULATOR_HOST } : {}),
    });
  }
  return createLocalStore({ root: localObjectsRoot(config), publicBaseUrl: publicBaseUrl(config) });
}

/** DATA_DIR/objects: written by the worker, read by the API's /files route. */
export function localObjectsRoot(config: Pick<Config, 'DATA_DIR'>): string {
  return path.resolve(config.DATA_DIR, 'objects');
}

/** Where browsers reach the API. */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_URL' | 'HOST' | 'PORT'>): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, '');
  const host =
    config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}
