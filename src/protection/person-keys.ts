// Crypto-shredding (issue 42): each person's payloads are sealed under a data key of their own, a random 256-bit
// key kept in PostgreSQL wrapped (AES-256-GCM, associated data: user id and key id) by the deployment's current
// key (041_person_data_keys.sql). Erasure destroys the row first: whatever of theirs stays sealed anywhere
// (the history file's free pages and WAL, a cluster's Temporal database, backups) then opens with no key anyone
// holds. Unwrapped keys are cached per process for DATA_KEY_TTL_MS, so a process other than the erasing one
// forgets an erased key within that time (the erasing one at once).
import { type KeyObject, createCipheriv, createDecipheriv, createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Payload } from '@temporalio/common';
import {
  type WrappedDataKey,
  addDataKey,
  dataKeyById,
  dataKeyOfWorkflow,
  dataKeysToRewrap,
  noteChildWorkflow,
  rewrapDataKey,
} from '../db/data-keys.ts';
import type { ChildToolInput } from '../shared/child-tool.ts';
import { TtlLru } from '../shared/ttl-lru.ts';
import { KEY_BYTES, type KeyProvider, type OwnerKeys, PERSON_KEY_PREFIX, UnknownKeyError } from './payload-codec.ts';

/** How long a process keeps an unwrapped data key, and an owner's key id of a workflow: an erased key's last use elsewhere. */
export const DATA_KEY_TTL_MS = 60_000;
const CACHE_MAX = 10_000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** chatSessionWorkflowId's form (src/shared/definitions.ts) */
const CONVERSATION_WORKFLOW = /^conversation-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PARENT_FIELD = 'parentWorkflowId' satisfies keyof ChildToolInput;

/**
 * The conversation a child tool's workflow belongs to, from its start input (ChildToolInput names its parent): the
 * one payload a conversation's worker seals for a child before the child exists. Its ids are random (child-runs.ts).
 */
function parentNamed(payloads: readonly Payload[]): string | undefined {
  if (payloads.length !== 1) return undefined;
  const [payload] = payloads;
  const data = payload!.data;
  // an object's JSON, not too large to parse (a child's input is a few kB)
  if (!data || data[0] !== 0x7b || data.length > 1 << 20 || Buffer.from(payload!.metadata?.encoding ?? []).toString() !== 'json/plain')
    return undefined;
  try {
    const parent = (JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown> | null)?.[PARENT_FIELD];
    return typeof parent === 'string' && CONVERSATION_WORKFLOW.test(parent) ? parent : undefined;
  } catch {
    return undefined;
  }
}

// A conversation's workflow starts inside the transaction that inserts its row, so no other connection sees the
// row yet: the API says whose it is here first, for this process's codecs.
const owners = new TtlLru<string, string>({ ttlMs: DATA_KEY_TTL_MS, max: CACHE_MAX });

/** `workflowId` (a conversation about to start) is `userId`'s: its first payloads are sealed under their key. */
export function noteWorkflowOwner(workflowId: string, userId: string): void {
  owners.set(workflowId, userId);
}

const aad = (userId: string, keyId: string) => Buffer.from(`${userId}\u0000${keyId}`, 'utf8');

/** The data key sealed by the deployment key `wrappingKeyId`: iv ‖ ciphertext ‖ tag. */
export function wrapDataKey(key: Uint8Array, wrappingKey: Uint8Array, userId: string, keyId: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', wrappingKey, iv);
  cipher.setAAD(aad(userId, keyId));
  return Buffer.concat([iv, cipher.update(key), cipher.final(), cipher.getAuthTag()]);
}

/** The data key, or an error when `wrappingKey` is not the one, or the row was moved to another user or key id. */
export function unwrapDataKey(wrapped: Uint8Array, wrappingKey: Uint8Array, userId: string, keyId: string): Buffer {
  if (wrapped.length !== IV_BYTES + KEY_BYTES + TAG_BYTES) throw new Error(`a wrapped data key is ${wrapped.length} bytes`);
  const decipher = createDecipheriv('aes-256-gcm', wrappingKey, wrapped.subarray(0, IV_BYTES));
  decipher.setAAD(aad(userId, keyId));
  decipher.setAuthTag(wrapped.subarray(wrapped.length - TAG_BYTES));
  return Buffer.concat([decipher.update(wrapped.subarray(IV_BYTES, wrapped.length - TAG_BYTES)), decipher.final()]);
}

interface Unwrapped {
  userId: string;
  id: string;
  key: KeyObject;
}

// every PersonKeys of this process, so that an erasure here drops the key from all of them at once
const live = new Set<WeakRef<PersonKeys>>();

/** Drops the person's data key from every cache of this process (erasure; other processes: DATA_KEY_TTL_MS). */
export function forgetPerson(userId: string): void {
  for (const ref of live) {
    const keys = ref.deref();
    if (keys) keys.forget(userId);
    else live.delete(ref);
  }
}

export class PersonKeys implements OwnerKeys {
  readonly #pool: Pick<pg.Pool, 'query'>;
  readonly #deployment: KeyProvider;
  readonly #byId: TtlLru<string, Unwrapped>;
  /** workflow id → its owner's key id */
  readonly #byWorkflow: TtlLru<string, string>;
  /** workflows no person owns (system workflows): the deployment key, without asking the database each time */
  readonly #unowned: TtlLru<string, true>;
  /** user id → their key id */
  readonly #byPerson: TtlLru<string, string>;
  readonly #pending = new Map<string, Promise<Unwrapped | undefined>>();

  constructor(pool: Pick<pg.Pool, 'query'>, deployment: KeyProvider, options: { ttlMs?: number; now?: () => number } = {}) {
    this.#pool = pool;
    this.#deployment = deployment;
    const cache = { ttlMs: options.ttlMs ?? DATA_KEY_TTL_MS, max: CACHE_MAX, now: options.now };
    this.#byId = new TtlLru(cache);
    this.#byWorkflow = new TtlLru(cache);
    this.#unowned = new TtlLru(cache);
    this.#byPerson = new TtlLru(cache);
    live.add(new WeakRef(this));
  }

  /** Lookups the caches answered and those that went to the database (a miss of either cache counts once). */
  stats(): { hits: number; misses: number } {
    return { hits: this.#byWorkflow.hits, misses: this.#byWorkflow.misses };
  }

  async forWorkflow(workflowId: string, payloads: readonly Payload[] = []): Promise<{ id: string; key: KeyObject } | undefined> {
    const keyId = this.#byWorkflow.get(workflowId);
    const cached = keyId === undefined ? undefined : this.#byId.get(keyId);
    if (cached) return cached;
    // a child's start command seals its summary too, which names no parent: its input, which does, still counts
    const parent = CONVERSATION_WORKFLOW.test(workflowId) ? undefined : parentNamed(payloads);
    if (!parent && this.#unowned.get(workflowId)) return undefined;
    return this.#once(`w:${workflowId}:${parent ?? ''}`, () => this.#resolveWorkflow(workflowId, parent));
  }

  /**
   * The person's own data key (made now when they have none), for what Brigade keeps of theirs outside Temporal
   * (an MCP server's tokens): sealed under it, it goes with the key at erasure.
   */
  async forPerson(userId: string): Promise<{ id: string; key: KeyObject }> {
    const keyId = this.#byPerson.get(userId);
    const cached = keyId === undefined ? undefined : this.#byId.get(keyId);
    if (cached) return cached;
    const found = await this.#once(`p:${userId}`, async () => this.#remember(await addDataKey(this.#pool, await this.#newKey(userId))));
    this.#byPerson.set(userId, found!.id);
    return found!;
  }

  async byId(id: string): Promise<KeyObject> {
    const cached = this.#byId.get(id);
    if (cached) return cached.key;
    const found = await this.#once(`k:${id}`, async () => {
      const wrapped = await dataKeyById(this.#pool, id);
      return wrapped && this.#remember(wrapped);
    });
    if (!found) throw new UnknownKeyError(`data key "${id}" does not exist: its person was erased (or it never existed)`);
    return found.key;
  }

  forget(userId: string): void {
    const gone = new Set<string>();
    this.#byId.deleteWhere((id, entry) => {
      if (entry.userId === userId) gone.add(id);
      return entry.userId === userId;
    });
    this.#byWorkflow.deleteWhere((_, id) => gone.has(id));
    this.#byPerson.deleteWhere((_, id) => gone.has(id));
  }

  async #resolveWorkflow(workflowId: string, parent: string | undefined): Promise<Unwrapped | undefined> {
    let found = await dataKeyOfWorkflow(this.#pool, workflowId);
    if (!found && parent && (await noteChildWorkflow(this.#pool, workflowId, parent)))
      found = await dataKeyOfWorkflow(this.#pool, workflowId);
    else if (!found && !parent && !CONVERSATION_WORKFLOW.test(workflowId)) this.#unowned.set(workflowId, true);
    const userId = found?.userId ?? owners.get(workflowId);
    // not (or no longer) a conversation: the deployment key seals it. A conversation's id is never remembered as
    // unowned: its row may commit a moment later.
    if (!userId) return undefined;
    const wrapped = found?.key ?? (await addDataKey(this.#pool, await this.#newKey(userId)));
    const unwrapped = await this.#remember(wrapped);
    this.#byWorkflow.set(workflowId, unwrapped.id);
    return unwrapped;
  }

  async #newKey(userId: string): Promise<WrappedDataKey> {
    const keyId = `${PERSON_KEY_PREFIX}${randomUUID()}`;
    const wrappingKeyId = this.#deployment.currentKeyId();
    // the raw key is wrapped at once and never kept: only its KeyObject, made when it comes back
    const raw = randomBytes(KEY_BYTES);
    const wrapped = wrapDataKey(raw, await this.#deployment.key(wrappingKeyId), userId, keyId);
    raw.fill(0);
    return { userId, keyId, wrappingKeyId, wrapped };
  }

  async #remember(wrapped: WrappedDataKey): Promise<Unwrapped> {
    const raw = await this.#open(wrapped);
    const unwrapped = { userId: wrapped.userId, id: wrapped.keyId, key: createSecretKey(raw) };
    raw.fill(0);
    this.#byId.set(wrapped.keyId, unwrapped);
    return unwrapped;
  }

  async #open(wrapped: WrappedDataKey): Promise<Buffer> {
    return unwrapDataKey(wrapped.wrapped, await this.#deployment.key(wrapped.wrappingKeyId), wrapped.userId, wrapped.keyId);
  }

  /** one lookup at a time per key: a turn's payloads arrive together */
  #once(key: string, fn: () => Promise<Unwrapped | undefined>): Promise<Unwrapped | undefined> {
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = fn().finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    return pending;
  }
}

/**
 * Rotation of the deployment keys: every data key not wrapped by the current deployment key is unwrapped with
 * its old one and wrapped again with the current one. Payloads are not touched (they name the data key, which
 * stays the same); once this returns, the old deployment key opens nothing any more and can be removed.
 */
export async function rewrapDataKeys(pool: Pick<pg.Pool, 'query'>, keys: KeyProvider): Promise<{ rewrapped: number }> {
  const current = keys.currentKeyId();
  const currentKey = await keys.key(current);
  let rewrapped = 0;
  const skipped = new Set<string>();
  for (;;) {
    const page = (await dataKeysToRewrap(pool, current, 200)).filter((row) => !skipped.has(row.keyId));
    if (page.length === 0) return { rewrapped };
    for (const row of page) {
      const raw = unwrapDataKey(row.wrapped, await keys.key(row.wrappingKeyId), row.userId, row.keyId);
      const done = await rewrapDataKey(pool, row, { wrappingKeyId: current, wrapped: wrapDataKey(raw, currentKey, row.userId, row.keyId) });
      raw.fill(0);
      if (done) rewrapped++;
      // erased or re-wrapped meanwhile: the next page would list it again only if it were still old
      else skipped.add(row.keyId);
    }
  }
}
