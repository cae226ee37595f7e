// How Brigade reaches a secured Temporal (Temporal Cloud, a cluster with mTLS), by Temporal's own
// environment-configuration conventions (@temporalio/envconfig): TEMPORAL_API_KEY, TEMPORAL_TLS,
// TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA, TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA, TEMPORAL_TLS_SERVER_CA_CERT_PATH
// / _DATA, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, TEMPORAL_GRPC_META_*, and the
// profile file (TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE).
// TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE stay Brigade's settings (config.ts), which the profile may fill.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ConnectionOptions } from '@temporalio/client';

type TLSConfig = Exclude<ConnectionOptions['tls'], boolean | null | undefined>;

export class TemporalTlsError extends Error {
  override name = 'TemporalTlsError';
}

export interface TemporalSecurity {
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
  /** from the profile file, when it names them */
  address?: string;
  namespace?: string;
}

/** Whether anything asks for a profile file (we do not read ~/.config/temporalio/temporal.toml unless it exists). */
function profileFile(env: NodeJS.ProcessEnv): string | undefined {
  if (env.TEMPORAL_CONFIG_FILE) return env.TEMPORAL_CONFIG_FILE;
  const home = env.HOME;
  const file = home ? `${home}/.config/temporalio/temporal.toml` : undefined;
  return file && fs.existsSync(file) ? file : undefined;
}

/**
 * The TLS, API key and gRPC metadata for both the client and the worker connection, checked here so that
 * a missing file, an unreadable PEM or a key that is not the certificate's is an error at start that names
 * the setting, rather than a handshake that fails (or hangs) later.
 */
export function temporalSecurity(env: NodeJS.ProcessEnv = process.env): TemporalSecurity {
  const file = profileFile(env);
  if (env.TEMPORAL_PROFILE && !file)
    throw new TemporalTlsError(`TEMPORAL_PROFILE is set but there is no profile file (TEMPORAL_CONFIG_FILE)`);
  let loaded;
  try {
    const overrideEnvVars = Object.fromEntries(
      Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    loaded = loadClientConnectConfig({ overrideEnvVars, ...(file ? { configSource: { path: file } } : { disableFile: true }) });
  } catch (error) {
    throw new TemporalTlsError(`Temporal connection settings${file ? ` (profile file ${file})` : ''}: ${(error as Error).message}`);
  }
  const { connectionOptions, namespace } = loaded;
  const tls = connectionOptions.tls;
  if (tls && typeof tls === 'object') checkTls(tls);
  return {
    ...(tls !== undefined && tls !== null ? { tls } : {}),
    ...(connectionOptions.apiKey && typeof connectionOptions.apiKey === 'string' ? { apiKey: connectionOptions.apiKey } : {}),
    ...(connectionOptions.metadata ? { metadata: connectionOptions.metadata as Record<string, string> } : {}),
    ...(file && connectionOptions.address ? { address: connectionOptions.address } : {}),
    ...(file && namespace ? { namespace } : {}),
  };
}

function checkTls(tls: TLSConfig): void {
  const pair = tls.clientCertPair;
  let cert: crypto.X509Certificate | undefined;
  if (pair) {
    try {
      cert = new crypto.X509Certificate(pair.crt);
    } catch (error) {
      throw new TemporalTlsError(`TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA is not a PEM certificate: ${(error as Error).message}`);
    }
    let key: crypto.KeyObject;
    try {
      key = crypto.createPrivateKey(pair.key);
    } catch (error) {
      throw new TemporalTlsError(`TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA is not a PEM private key: ${(error as Error).message}`);
    }
    if (!cert.checkPrivateKey(key)) {
      throw new TemporalTlsError('TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA is not the private key of TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA');
    }
    const expires = Date.parse(cert.validTo);
    if (Number.isFinite(expires) && expires < Date.now()) {
      throw new TemporalTlsError(`The client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH) expired on ${cert.validTo}`);
    }
  }
  if (tls.serverRootCACertificate) {
    try {
      new crypto.X509Certificate(tls.serverRootCACertificate);
    } catch (error) {
      throw new TemporalTlsError(`TEMPORAL_TLS_SERVER_CA_CERT_PATH / _DATA is not a PEM certificate: ${(error as Error).message}`);
    }
  }
}

/** For messages: how the connection is secured, never the secret itself. */
export function describeSecurity(security: TemporalSecurity): string {
  const parts = [];
  if (security.tls) parts.push(typeof security.tls === 'object' && security.tls.clientCertPair ? 'mTLS' : 'TLS');
  if (security.apiKey) parts.push('API key');
  return parts.length ? parts.join(' + ') : 'plaintext';
}
