import net from 'node:net';

/** True when nothing listens on host:port, tested by binding it briefly (what the real server is about to do). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A port free right now, for a server that binds it a moment later (often another process). It is picked below the
 * kernel's ephemeral range (32768 up on Linux): a port the OS hands out there can become some outgoing
 * connection's source port before the server binds it, and the server then fails with EADDRINUSE.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isPortFree(port, host)) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}

/** Resolves once a TCP connection to host:port succeeds; rejects with the socket error (ECONNREFUSED, ENOTFOUND...). */
export function tcpProbe(host: string, port: number, timeoutMs = 1_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const done = (error?: Error) => {
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    socket.setTimeout(timeoutMs, () => done(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    socket.once('connect', () => done());
    socket.once('error', done);
  });
}

/** Human words for the socket errors a wrong address produces. */
export function describeSocketError(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ECONNRESET':
      return 'connection reset';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
