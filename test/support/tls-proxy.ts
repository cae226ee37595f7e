// A TLS front for the run's Temporal dev server (which has no TLS flags): it terminates TLS with a server
// certificate from a CA the test made, requires a client certificate from that CA (mTLS), negotiates h2 by
// ALPN as gRPC clients expect, and pipes the bytes to the dev server's plaintext port.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

export interface Pki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** a client certificate from another CA, which the server must refuse */
  rogueCert: string;
  rogueKey: string;
}

function openssl(dir: string, args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, a server certificate for 127.0.0.1/localhost, a client certificate, and a rogue CA's client certificate. */
export function makePki(): Pki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-pki-'));
  const key = (name: string) => openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  const ca = (name: string) => {
    key(name);
    openssl(dir, ['req', '-x509', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-days', '2', '-out', `${name}.pem`]);
  };
  const leaf = (name: string, signer: string, ext: string) => {
    key(name);
    openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-out', `${name}.csr`]);
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${signer}.pem`,
      '-CAkey',
      `${signer}.key`,
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ]);
  };
  ca('ca');
  ca('rogue-ca');
  leaf('server', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'ca', 'extendedKeyUsage=clientAuth\n');
  leaf('rogue', 'rogue-ca', 'extendedKeyUsage=clientAuth\n');
  const at = (file: string) => path.join(dir, file);
  return {
    dir,
    caCert: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    rogueCert: at('rogue.pem'),
    rogueKey: at('rogue.key'),
  };
}

export interface TlsProxy {
  address: string;
  /** handshakes the proxy refused (no or wrong client certificate) */
  refused: number;
  close(): Promise<void>;
}

export async function startTlsProxy(pki: Pki, upstream: string): Promise<TlsProxy> {
  const [host, port] = [upstream.slice(0, upstream.lastIndexOf(':')), Number(upstream.slice(upstream.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  const proxy = { refused: 0 } as TlsProxy;
  const server = tls.createServer(
    {
      key: fs.readFileSync(pki.serverKey),
      cert: fs.readFileSync(pki.serverCert),
      ca: fs.readFileSync(pki.caCert),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (client) => {
      const backend = net.connect(port, host);
      sockets.add(client).add(backend);
      const drop = () => {
        client.destroy();
        backend.destroy();
        sockets.delete(client);
        sockets.delete(backend);
      };
      client.on('error', drop).on('close', drop);
      backend.on('error', drop).on('close', drop);
      client.pipe(backend).pipe(client);
    },
  );
  server.on('tlsClientError', () => {
    proxy.refused += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return proxy;
}
