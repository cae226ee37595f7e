// The Idempotency-Key contract of the POSTs: the same key with the same body gets the first outcome; the
// same key with a different body is a 422 (the request was not carried out). A key belongs to its user and
// its scope: creating conversations, or one conversation's messages and decisions together.
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { HttpError } from './http-error.ts';

const KEY = /^[\w.:-]{1,200}$/;

/** The request's Idempotency-Key header, if any; 400 when it is not a plain token. */
export function idempotencyKey(req: Request): string | undefined {
  const key = req.header('Idempotency-Key');
  if (key === undefined) return undefined;
  if (!KEY.test(key)) throw new HttpError(400, 'Idempotency-Key: at most 200 letters, digits or ._:-');
  return key;
}

/** SHA-256 of the route and the validated body as canonical JSON (keys sorted), so key order does not matter. */
export function requestHash(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const keyReused = () =>
  new HttpError(
    422,
    'This Idempotency-Key was already used with a different request; send a new key for a new request, or the same body to get the first outcome',
  );
