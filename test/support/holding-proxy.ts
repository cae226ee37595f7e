// An HTTP proxy in front of a test server that can hold one matching request's answer after the upstream
// has acted on it: the caller's effect has happened, but the caller has not heard back (kill it now).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeldRequest {
  method: string;
  path: string;
  body: string;
}

export interface Hold {
  /** resolves once a matching request has been answered upstream and is being held */
  reached: Promise<HeldRequest>;
  release(): void;
}

export interface HoldingProxy {
  url: string;
  /** holds the answer of the next request that `match` accepts */
  holdNext(match: (request: HeldRequest) => boolean): Hold;
  close(): Promise<void>;
}

export async function startHoldingProxy(upstream: string): Promise<HoldingProxy> {
  let armed: { match: (request: HeldRequest) => boolean; reach: (request: HeldRequest) => void; released: Promise<void> } | undefined;
  const releases = new Set<() => void>();

  const server = http.createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined || ['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) continue;
        headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const answer = await fetch(`${upstream}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
        redirect: 'manual',
      });
      const answerBody = Buffer.from(await answer.arrayBuffer());
      const seen: HeldRequest = { method: req.method ?? 'GET', path: req.url ?? '/', body: body.toString('latin1') };
      if (armed && armed.match(seen)) {
        const hold = armed;
        armed = undefined;
        hold.reach(seen);
        const gone = new Promise<void>((resolve) => res.once('close', () => resolve()));
        await Promise.race([hold.released, gone]);
      }
      if (res.destroyed) return;
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) out[name] = value;
      });
      res.writeHead(answer.status, { ...out, 'content-length': String(answerBody.length) });
      res.end(answerBody);
    } catch (error) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`holding proxy: ${String(error)}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    holdNext(match) {
      let reach!: (request: HeldRequest) => void;
      let release!: () => void;
      const reached = new Promise<HeldRequest>((resolve) => (reach = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      releases.add(release);
      armed = { match, reach, released };
      return { reached, release };
    },
    async close() {
      for (const release of releases) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
