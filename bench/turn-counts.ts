// Counts per turn for bench/turns.ts (issue 49): what a turn does, beside what it costs in CPU, so that a change
// can be judged on a shared machine by counts that do not move with the load. Taken in the bench's process (the
// client and, in npm start's shape, the workers: in the cluster shape the workers' codec and workflow thread are
// in processes of their own and only the client's part shows), and from PostgreSQL's pg_stat_statements:
// - workflow activations: the messages the SDK posts to its workflow threads (`activate-workflow`), every worker's
// - codec calls: EncryptionCodec encode and decode calls, the payloads they carry, and the bytes that cross to
//   Temporal (encoded) and come back from it (decoded, sealed size), client and worker together
// - SQL statements sent: top-level statements of Brigade's database (round trips; a function's inner ones are not)
// - garbage: the main thread's collections (minor, major) and their time, from the `gc` performance entries
// The sides run one after the other, so a count between two snapshots is the side's that ran between them.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { Worker as ThreadWorker } from 'node:worker_threads';
import { LoggerWithComposedMetadata, type Payload } from '@temporalio/common';
import { EncryptionCodec } from '../src/protection/payload-codec.ts';
import { withClient } from '../src/db/with-client.ts';

export interface Counts {
  activations: number;
  /** the other requests to the workflow threads: create, dispose, sink calls */
  threadRequests: number;
  encodeCalls: number;
  decodeCalls: number;
  payloadsEncoded: number;
  payloadsDecoded: number;
  bytesToTemporal: number;
  bytesFromTemporal: number;
  /** ms in the codec's encode and decode, wall time: AES-GCM and the framing, and the waits for persons' keys */
  codecMs: number;
  /** ms in postMessage to the workflow threads (the structured clone of activations and requests) */
  threadPostMs: number;
  /** the SDK's trace and debug log calls: each resolves its metadata before the level drops it */
  sdkQuietLogs: number;
  sqlStatements: number;
  /** of which lookups of persons' data keys (the codec's, after its cache forgot them: DATA_KEY_TTL_MS) */
  keyLookups: number;
  gcMinor: number;
  gcMajor: number;
  gcMs: number;
}

const zero = (): Counts => ({
  activations: 0,
  threadRequests: 0,
  encodeCalls: 0,
  decodeCalls: 0,
  payloadsEncoded: 0,
  payloadsDecoded: 0,
  bytesToTemporal: 0,
  bytesFromTemporal: 0,
  codecMs: 0,
  threadPostMs: 0,
  sdkQuietLogs: 0,
  sqlStatements: 0,
  keyLookups: 0,
  gcMinor: 0,
  gcMajor: 0,
  gcMs: 0,
});

const live = zero();
let installed = false;

const payloadBytes = (payloads: readonly Payload[]) =>
  payloads.reduce(
    (sum, payload) =>
      sum +
      (payload.data?.length ?? 0) +
      Object.entries(payload.metadata ?? {}).reduce((m, [name, value]) => m + name.length + (value?.length ?? 0), 0),
    0,
  );

/** Wraps what is counted, once per process; before the workers and clients are built. */
export function installCounters(): void {
  if (installed) return;
  installed = true;
  const post = ThreadWorker.prototype.postMessage;
  ThreadWorker.prototype.postMessage = function (this: ThreadWorker, message: unknown, ...rest: unknown[]) {
    const type = (message as { input?: { type?: unknown } } | null)?.input?.type;
    if (type === 'activate-workflow') live.activations += 1;
    else if (typeof type === 'string') live.threadRequests += 1;
    const started = performance.now();
    try {
      return (post as (...args: unknown[]) => void).call(this, message, ...rest);
    } finally {
      live.threadPostMs += performance.now() - started;
    }
  } as typeof post;
  const { encode, decode } = EncryptionCodec.prototype;
  EncryptionCodec.prototype.encode = async function (this: EncryptionCodec, payloads, context) {
    const started = performance.now();
    const sealed = await encode.call(this, payloads, context);
    live.codecMs += performance.now() - started;
    live.encodeCalls += 1;
    live.payloadsEncoded += payloads.length;
    live.bytesToTemporal += payloadBytes(sealed);
    return sealed;
  };
  EncryptionCodec.prototype.decode = async function (this: EncryptionCodec, payloads) {
    live.decodeCalls += 1;
    live.payloadsDecoded += payloads.length;
    live.bytesFromTemporal += payloadBytes(payloads);
    const started = performance.now();
    try {
      return await decode.call(this, payloads);
    } finally {
      live.codecMs += performance.now() - started;
    }
  };
  for (const level of ['trace', 'debug'] as const) {
    const log = LoggerWithComposedMetadata.prototype[level];
    LoggerWithComposedMetadata.prototype[level] = function (this: LoggerWithComposedMetadata, ...args: Parameters<typeof log>) {
      live.sdkQuietLogs += 1;
      return log.apply(this, args);
    };
  }
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = ((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) live.gcMajor += 1;
      else live.gcMinor += 1;
      live.gcMs += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
}

/** Top-level statements of the database so far (pg_stat_statements), and the data-key lookups among them; NaN without it. */
function statementsSent(url: string | undefined): Promise<{ all: number; keys: number }> {
  const none = { all: NaN, keys: NaN };
  if (!url) return Promise.resolve(none);
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ calls: string | null; keys: string | null }>(
      `SELECT sum(calls)::text AS calls, (sum(calls) FILTER (WHERE query LIKE '%brigade_data_key%'))::text AS keys FROM pg_stat_statements
        WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return { all: Number(rows[0]?.calls ?? NaN), keys: Number(rows[0]?.keys ?? 0) };
  }).catch(() => none);
}

/** A snapshot of every count; `databaseUrl` adds the statements (its own query is taken off in `countsBetween`). */
export async function countsNow(databaseUrl?: string): Promise<Counts> {
  const sent = await statementsSent(databaseUrl);
  return { ...live, sqlStatements: sent.all, keyLookups: sent.keys };
}

/** Counts per turn between two snapshots. */
export function countsBetween(before: Counts | undefined, after: Counts | undefined, turns: number): Counts | undefined {
  if (!before || !after || turns <= 0) return undefined;
  const per = zero();
  for (const key of Object.keys(per) as (keyof Counts)[]) per[key] = (after[key] - before[key]) / turns;
  // the snapshot's own query (one statement, counted in the later snapshot)
  per.sqlStatements = (after.sqlStatements - before.sqlStatements - 1) / turns;
  return per;
}

/** The rows the bench prints, in order: a count's key, its label and its digits. */
export const COUNT_ROWS: [keyof Counts, string, number][] = [
  ['activations', 'workflow activations', 2],
  ['threadRequests', 'other workflow-thread requests', 2],
  ['encodeCalls', 'codec encode calls', 2],
  ['decodeCalls', 'codec decode calls', 2],
  ['payloadsEncoded', 'payloads encoded', 2],
  ['payloadsDecoded', 'payloads decoded', 2],
  ['bytesToTemporal', 'payload bytes to Temporal (sealed)', 0],
  ['bytesFromTemporal', 'payload bytes from Temporal (sealed)', 0],
  ['codecMs', 'ms in the codec (wall: with key lookups)', 3],
  ['threadPostMs', 'ms posting to the workflow threads', 3],
  ['sdkQuietLogs', "the SDK's trace and debug log calls", 2],
  ['sqlStatements', 'SQL statements sent (round trips)', 2],
  ['keyLookups', "  of which persons' data-key lookups", 2],
  ['gcMinor', 'main-thread GCs, minor', 3],
  ['gcMajor', 'main-thread GCs, major', 3],
  ['gcMs', 'main-thread GC ms', 3],
];
