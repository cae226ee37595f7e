// Brigade's client and worker connections to a Temporal that requires mutual TLS, configured as Temporal's
// environment-configuration conventions say (TEMPORAL_TLS_*, the profile file), and the clear errors a
// bad certificate or key gives at start.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connectTemporal, connectTemporalWorker } from '../../stack/connect.ts';
import { TemporalTlsError, describeSecurity, temporalSecurity } from '../../stack/temporal-tls.ts';
import { temporalAddress } from '../support/harness.ts';
import { type Pki, type TlsProxy, makePki, startTlsProxy } from '../support/tls-proxy.ts';

let pki: Pki;
let proxy: TlsProxy;

before(async () => {
  pki = makePki();
  proxy = await startTlsProxy(pki, temporalAddress());
});
after(async () => {
  await proxy?.close();
  if (pki) fs.rmSync(pki.dir, { recursive: true, force: true });
});

const mtlsEnv = (overrides: Record<string, string> = {}) => ({
  TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
  TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
  ...overrides,
});

describe('a Temporal that requires mutual TLS', () => {
  test('the client and the worker connect with TEMPORAL_TLS_* certificates', async () => {
    const security = temporalSecurity(mtlsEnv());
    assert.equal(describeSecurity(security), 'mTLS');
    const { connection, client } = await connectTemporal(proxy.address, 'default', { security });
    try {
      const described = await client.workflowService.describeNamespace({ namespace: 'default' });
      assert.equal(described.namespaceInfo?.name, 'default');
    } finally {
      await connection.close();
    }
    const worker = await connectTemporalWorker(proxy.address, { security });
    try {
      const info = await worker.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion !== undefined);
    } finally {
      await worker.close();
    }
  });

  test('a profile file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE) gives the address, the namespace and the certificates', async () => {
    const file = path.join(pki.dir, 'temporal.toml');
    fs.writeFileSync(
      file,
      [
        '[profile.secure]',
        `address = "${proxy.address}"`,
        'namespace = "default"',
        '[profile.secure.tls]',
        `client_cert_path = "${pki.clientCert}"`,
        `client_key_path = "${pki.clientKey}"`,
        `server_ca_cert_path = "${pki.caCert}"`,
        '',
      ].join('\n'),
    );
    const security = temporalSecurity({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'secure' });
    assert.equal(security.address, proxy.address);
    assert.equal(security.namespace, 'default');
    const { connection } = await connectTemporal(security.address!, security.namespace!, { security });
    await connection.close();
    assert.throws(() => temporalSecurity({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' }), /Profile 'nope' not found/);
  });

  test('without a client certificate, or with one from another CA, start fails promptly with the reason', async () => {
    const refusedBefore = proxy.refused;
    for (const env of [
      { TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert },
      mtlsEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: pki.rogueCert, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.rogueKey }),
    ]) {
      const security = temporalSecurity(env);
      const started = Date.now();
      await assert.rejects(connectTemporal(proxy.address, 'default', { security, timeoutMs: 5_000 }), (error: Error) => {
        assert.match(
          error.message,
          new RegExp(
            `Temporal (is not reachable|at ${proxy.address.replace(/\./g, '\\.')} \\(TEMPORAL_ADDRESS, (TLS|mTLS)\\) did not answer)`,
          ),
        );
        assert.match(error.message, /TEMPORAL_ADDRESS, m?TLS/);
        return true;
      });
      await assert.rejects(
        connectTemporalWorker(proxy.address, { security, timeoutMs: 5_000 }),
        /Temporal is not reachable .*TEMPORAL_ADDRESS, m?TLS/,
      );
      assert.ok(Date.now() - started < 30_000, 'no hang');
    }
    assert.ok(proxy.refused > refusedBefore, 'the server refused the handshakes');
  });

  test('a server certificate from an unknown CA is refused by the client', async () => {
    const security = temporalSecurity(mtlsEnv({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(pki.dir, 'rogue-ca.pem') }));
    await assert.rejects(connectTemporal(proxy.address, 'default', { security, timeoutMs: 5_000 }), /Temporal .*TEMPORAL_ADDRESS, mTLS/);
    await assert.rejects(connectTemporalWorker(proxy.address, { security, timeoutMs: 5_000 }), /Temporal is not reachable .*mTLS/);
  });

  test('a bad certificate or key is an error at start that names the setting', () => {
    const garbage = path.join(pki.dir, 'garbage.pem');
    fs.writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
    assert.throws(
      () => temporalSecurity(mtlsEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: garbage })),
      (error: Error) => {
        assert.ok(error instanceof TemporalTlsError);
        assert.match(error.message, /TEMPORAL_TLS_CLIENT_CERT_PATH .* is not a PEM certificate/);
        return true;
      },
    );
    assert.throws(
      () => temporalSecurity(mtlsEnv({ TEMPORAL_TLS_CLIENT_KEY_PATH: garbage })),
      /TEMPORAL_TLS_CLIENT_KEY_PATH .* is not a PEM private key/,
    );
    assert.throws(
      () => temporalSecurity(mtlsEnv({ TEMPORAL_TLS_CLIENT_KEY_PATH: pki.rogueKey })),
      /is not the private key of TEMPORAL_TLS_CLIENT_CERT_PATH/,
    );
    assert.throws(
      () => temporalSecurity(mtlsEnv({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: garbage })),
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH .* is not a PEM certificate/,
    );
    assert.throws(
      () => temporalSecurity(mtlsEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(pki.dir, 'missing.pem') })),
      /Temporal connection settings: .*ENOENT.*missing\.pem/,
    );
  });

  test('an API key alone means TLS with the key (Temporal Cloud), and plaintext stays the default', () => {
    const cloud = temporalSecurity({ TEMPORAL_API_KEY: 'test-api-key' });
    assert.equal(cloud.apiKey, 'test-api-key');
    assert.equal(describeSecurity(cloud), 'TLS + API key');
    assert.equal(describeSecurity(temporalSecurity({})), 'plaintext');
  });
});
