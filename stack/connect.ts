import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import pg from 'pg';
import { describeSocketError, tcpProbe } from './ports.ts';
import { clientInterceptors } from '../src/telemetry/temporal.ts';
import { describeSecurity, temporalSecurity, type TemporalSecurity } from './temporal-tls.ts';

// Services started next to us (docker compose, a PostgreSQL that is still booting) may take a few
// seconds to answer, so a refused connection is retried; past the deadline it is the user's error.
const DEFAULT_TIMEOUT_MS = 10_000;
const RETRY_EVERY_MS = 500;

export class ServiceUnreachableError extends Error {
  override name = 'ServiceUnreachableError';
}

interface ConnectOptions {
  /** The setting the address came from, named in the error so the user knows what to fix. */
  setting?: string;
  timeoutMs?: number;
  /** TLS / API key; by default from the TEMPORAL_TLS_* / TEMPORAL_API_KEY environment and profile (temporal-tls.ts) */
  security?: TemporalSecurity;
  /** the payload codec (src/protection/data-converter.ts); required of every Brigade client */
  dataConverter?: DataConverter;
}

/** The URL without its password (also a `password` query parameter), fit for logs and errors. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

// Errors that waiting will not fix: wrong password, unknown database or role, bad URL.
const DEFINITIVE_PG_CODES = new Set(['28P01', '28000', '3D000', '42501']);

/** Resolves once PostgreSQL at `url` runs a query; otherwise one error naming the service and the address. */
export async function checkPostgres(url: string, opts: ConnectOptions = {}): Promise<void> {
  const setting = opts.setting ?? 'DATABASE_URL';
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const unreachable = (reason: string) =>
    new ServiceUnreachableError(`PostgreSQL is not reachable at ${redactDatabaseUrl(url)} (${setting}): ${reason}`);
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: Math.max(1_000, deadline - Date.now()) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      const reason = describePgError(error);
      if ((code && DEFINITIVE_PG_CODES.has(code)) || Date.now() + RETRY_EVERY_MS >= deadline) throw unreachable(reason);
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(RETRY_EVERY_MS);
  }
}

function describePgError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/timeout/i.test(message)) return 'timed out';
  if ((error as { code?: string }).code?.startsWith('E')) return describeSocketError(error);
  return message || describeSocketError(error);
}

function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(address.slice(at + 1)) };
}

/** Waits (bounded) until something accepts TCP connections at the Temporal address. */
async function waitForTemporalPort(address: string, setting: string, deadline: number) {
  const { host, port } = splitAddress(address);
  for (;;) {
    try {
      await tcpProbe(host, port, Math.max(500, Math.min(2_000, deadline - Date.now())));
      return;
    } catch (error) {
      if (Date.now() + RETRY_EVERY_MS >= deadline) {
        throw new ServiceUnreachableError(`Temporal is not reachable at ${address} (${setting}): ${describeSocketError(error)}`);
      }
    }
    await sleep(RETRY_EVERY_MS);
  }
}

/** A client connection to Temporal that has answered, and a client bound to a namespace that exists. */
export async function connectTemporal(
  address: string,
  namespace: string,
  opts: ConnectOptions = {},
): Promise<{ connection: Connection; client: Client }> {
  const setting = opts.setting ?? 'TEMPORAL_ADDRESS';
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  await waitForTemporalPort(address, setting, deadline);
  const { tls, apiKey, metadata } = opts.security ?? temporalSecurity();
  const secured = describeSecurity({ tls, apiKey });
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, tls, apiKey, metadata, connectTimeout: Math.max(1_000, deadline - Date.now()) });
  } catch (error) {
    throw new ServiceUnreachableError(`Temporal is not reachable at ${address} (${setting}, ${secured}): ${(error as Error).message}`);
  }
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    await connection.close().catch(() => undefined);
    if ((error as { code?: number }).code === 5 /* NOT_FOUND */) {
      throw new ServiceUnreachableError(`Temporal namespace "${namespace}" does not exist at ${address} (TEMPORAL_NAMESPACE)`);
    }
    throw new ServiceUnreachableError(`Temporal at ${address} (${setting}, ${secured}) did not answer: ${(error as Error).message}`);
  }
  return {
    connection,
    client: new Client({ connection, namespace, interceptors: clientInterceptors(), dataConverter: opts.dataConverter }),
  };
}

/** The worker's (Rust core) connection, with the same reachability check and error shape. */
export async function connectTemporalWorker(address: string, opts: ConnectOptions = {}): Promise<NativeConnection> {
  const setting = opts.setting ?? 'TEMPORAL_ADDRESS';
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  await waitForTemporalPort(address, setting, deadline);
  const { tls, apiKey, metadata } = opts.security ?? temporalSecurity();
  try {
    return await NativeConnection.connect({ address, tls, apiKey, metadata });
  } catch (error) {
    throw new ServiceUnreachableError(
      `Temporal is not reachable at ${address} (${setting}, ${describeSecurity({ tls, apiKey })}): ${(error as Error).message}`,
    );
  }
}
