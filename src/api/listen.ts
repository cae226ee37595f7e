import http from 'node:http';
import type { RequestListener } from 'node:http';

/** How long an idle keep-alive connection is kept. */
const KEEP_ALIVE_MS = 65_000;

/** Starts the HTTP server; a taken or forbidden port becomes one sentence naming the address and the setting. */
export function listen(app: RequestListener, port: number, host: string): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    // An idle keep-alive connection stays open longer than a client or a load balancer keeps one (undici: 4 s,
    // AWS ALB: 60 s), so the server never closes it as the client sends on it: that race reset requests (ECONNRESET).
    const server = http.createServer({ keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: KEEP_ALIVE_MS + 1_000 }, app);
    const onError = (error: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (error.code === 'EADDRINUSE') reject(new Error(`API could not listen on ${where}: the port is in use; set PORT`));
      else if (error.code === 'EACCES') reject(new Error(`API could not listen on ${where}: permission denied; set PORT above 1023`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new Error(`API could not listen on ${where}: no such address on this machine; set HOST`));
      } else reject(new Error(`API could not listen on ${where}: ${error.message}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

/** Stops accepting connections; open streams (SSE) get a moment to finish, then are cut. */
export function closeServer(server: http.Server, graceMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), graceMs).unref();
  });
}
