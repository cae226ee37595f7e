// Encrypts every payload Brigade hands Temporal (workflow and activity inputs and results, Updates, Signals,
// queries, memos) with AES-256-GCM before it leaves the process, so that the server's history (the dev
// server's file, a cluster's tables, Temporal Cloud) holds ciphertext. The key id travels in each payload's
// metadata, so a new key can be rolled in while payloads sealed with an old one stay readable. Payloads
// without this codec's encoding (histories recorded before it, or written with encryption off) pass through.
// Payloads a person owns (their conversation's workflow and its activities) are sealed under that person's own
// data key instead (OwnerKeys, src/protection/person-keys.ts), which erasure destroys; same format, its id says whose.
import { type KeyObject, createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const METADATA_ENCODING_KEY = 'encoding';
const METADATA_KEY_ID = 'encryption-key-id';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

const utf8 = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array | null | undefined) => (bytes ? new TextDecoder().decode(bytes) : undefined);

/**
 * Where keys come from. Settings implement it (StaticKeyProvider); a KMS can too: `currentKeyId` names the
 * key new payloads use, `key(id)` returns the raw 256-bit key (a KMS provider unwraps data keys and caches
 * them), and an unknown id is an error, never a silent pass-through.
 */
export interface KeyProvider {
  currentKeyId(): string;
  key(id: string): Promise<Uint8Array>;
}

/** Key ids of persons' data keys start so; a deployment key's id cannot (no colon: src/config.ts checks them). */
export const PERSON_KEY_PREFIX = 'person:';

/**
 * The keys of payloads' owners: for a workflow a person owns, their data key (made on first use); for the id a
 * sealed payload names, that key, or UnknownKeyError once it was destroyed. Decoding needs no context.
 */
export interface OwnerKeys {
  /** `payloads` are those to seal: a child workflow's start input names its parent */
  forWorkflow(workflowId: string, payloads: readonly Payload[]): Promise<{ id: string; key: KeyObject } | undefined>;
  byId(id: string): Promise<KeyObject>;
}

export class UnknownKeyError extends Error {
  override name = 'UnknownKeyError';
}

/** A payload that claims to be sealed but cannot be opened by any key: forged, cut or tampered with. */
export class UnopenablePayloadError extends Error {
  override name = 'UnopenablePayloadError';
}

export class StaticKeyProvider implements KeyProvider {
  private readonly keys: Map<string, Uint8Array>;
  private readonly current: string;
  constructor(keys: Record<string, Uint8Array>, currentKeyId: string) {
    this.keys = new Map(Object.entries(keys));
    for (const [id, key] of this.keys) {
      if (key.length !== KEY_BYTES) throw new Error(`payload encryption key "${id}" is ${key.length} bytes; AES-256 needs ${KEY_BYTES}`);
    }
    if (!this.keys.has(currentKeyId)) throw new Error(`payload encryption key id "${currentKeyId}" is not among the keys`);
    this.current = currentKeyId;
  }
  currentKeyId(): string {
    return this.current;
  }
  async key(id: string): Promise<Uint8Array> {
    const key = this.keys.get(id);
    if (!key)
      throw new UnknownKeyError(
        `no payload encryption key "${id}" (PAYLOAD_ENCRYPTION_KEYS): was it removed while payloads sealed with it remain?`,
      );
    return key;
  }
}

/**
 * The sealed form: data = iv (12 bytes) ‖ ciphertext ‖ tag (16 bytes) of the whole original payload
 * (its metadata and data, as the proto's JSON-free binary encoding), metadata = encoding and key id only, so
 * the original encoding (json/plain, binary/null...) is hidden too. The key id is bound as associated
 * data, so a payload cannot be relabelled to another key.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: KeyProvider;
  private readonly owners: OwnerKeys | undefined;
  /** A key id names one key for good; its KeyObject is made once, not prepared again for every payload. */
  private readonly prepared = new Map<string, KeyObject>();
  /** without `owners`, every payload is sealed under the deployment's key, and one a person's key sealed cannot be opened */
  constructor(keys: KeyProvider, owners?: OwnerKeys) {
    this.keys = keys;
    this.owners = owners;
  }

  private async key(id: string): Promise<KeyObject> {
    if (id.startsWith(PERSON_KEY_PREFIX)) {
      if (!this.owners)
        throw new UnknownKeyError(`payload sealed under a person's data key (${id}): this codec has no database to find it in`);
      return this.owners.byId(id);
    }
    let key = this.prepared.get(id);
    if (!key) {
      key = createSecretKey(await this.keys.key(id));
      this.prepared.set(id, key);
    }
    return key;
  }

  /** `context` names the workflow the payloads belong to (the SDK's serialization context): its owner's key seals them */
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const owned = context?.workflowId && this.owners ? await this.owners.forWorkflow(context.workflowId, payloads) : undefined;
    const id = owned?.id ?? this.keys.currentKeyId();
    const key = owned?.key ?? (await this.key(id));
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, key, iv);
      cipher.setAAD(utf8(id));
      const sealed = Buffer.concat([cipher.update(serialize(payload)), cipher.final()]);
      return {
        metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [METADATA_KEY_ID]: utf8(id) },
        data: Buffer.concat([iv, sealed, cipher.getAuthTag()]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
        const id = text(payload.metadata?.[METADATA_KEY_ID]);
        if (!id) throw new UnopenablePayloadError('an encrypted payload names no key id');
        const key = await this.key(id);
        const data = payload.data ?? new Uint8Array();
        if (data.length < IV_BYTES + TAG_BYTES) throw new UnopenablePayloadError('an encrypted payload is too short');
        const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES));
        decipher.setAAD(utf8(id));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        let plain: Buffer;
        try {
          plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
        } catch {
          throw new UnopenablePayloadError(`an encrypted payload does not open with its key "${id}" (tampered with, or not sealed by it)`);
        }
        return deserialize(plain);
      }),
    );
  }
}

/** Which key sealed a payload (undefined when it is not sealed): for rotation reports and tests. */
export function sealedWith(payload: Payload): string | undefined {
  if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return undefined;
  return text(payload.metadata?.[METADATA_KEY_ID]);
}

// A payload as bytes: a count of metadata entries, each as length-prefixed name and value, then the data.
// Written here rather than with the proto classes so the codec depends on nothing but node:crypto.
function serialize(payload: Payload): Buffer {
  const parts: Buffer[] = [];
  const entries = Object.entries(payload.metadata ?? {});
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  parts.push(u32(entries.length));
  for (const [name, value] of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value ?? new Uint8Array());
    parts.push(u32(nameBytes.length), nameBytes, u32(valueBytes.length), valueBytes);
  }
  parts.push(Buffer.from(payload.data ?? new Uint8Array()));
  return Buffer.concat(parts);
}

function deserialize(bytes: Buffer): Payload {
  let at = 0;
  const u32 = () => {
    if (at + 4 > bytes.length) throw new UnopenablePayloadError('a decrypted payload is malformed');
    const n = bytes.readUInt32BE(at);
    at += 4;
    return n;
  };
  const take = (n: number) => {
    if (at + n > bytes.length) throw new UnopenablePayloadError('a decrypted payload is malformed');
    const slice = bytes.subarray(at, at + n);
    at += n;
    return slice;
  };
  const metadata: Record<string, Uint8Array> = {};
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = take(u32()).toString('utf8');
    metadata[name] = new Uint8Array(take(u32()));
  }
  return { metadata, data: new Uint8Array(bytes.subarray(at)) };
}
