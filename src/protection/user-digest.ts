// A user id as a fixed-alphabet name: the hex SHA-256 of its UTF-8, the same digest the erasure fence keeps
// (brigade_user_digest in db/migrations/043_erasure_fence.sql). Temporal's visibility query language has no
// escape for a quote inside a keyword that every store honours (the dev server's SQLite matches neither
// "al\"ice" nor 'al"ice'), so an erasure finds a person's executions by this instead of by their id.
import { createHash } from 'node:crypto';
import type { TypedSearchAttributes } from '@temporalio/common';
import { USER_DIGEST_KEY, USER_KEY } from '../shared/search-attributes.ts';

export const userDigest = (user: string): string => createHash('sha256').update(user, 'utf8').digest('hex');

/** The search attributes that name a conversation's person, set when its workflow starts. */
export const userSearchAttributes = (user: string) =>
  [
    { key: USER_KEY, value: user },
    { key: USER_DIGEST_KEY, value: userDigest(user) },
  ] as const;

/** Whether a listed execution is this very person's: its BrigadeUser is the id itself, byte for byte. */
export const isExecutionOf = (attributes: TypedSearchAttributes | undefined, user: string): boolean => attributes?.get(USER_KEY) === user;
