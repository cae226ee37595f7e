// Serves an MCP server over Streamable HTTP on a free loopback port, one server instance per session, for the
// misbehaving servers the tests start (mcp-bulky, mcp-sluggish, mcp-patterns-server).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface McpHttp {
  /** the MCP endpoint, `http://127.0.0.1:<port>/mcp` */
  url: string;
  close(): Promise<void>;
}

/** `build` makes a server for each new session (McpServer or the low-level Server: anything that connects to a transport). */
export async function serveMcpOverHttp(
  build: () => { connect(transport: StreamableHTTPServerTransport): Promise<void> },
): Promise<McpHttp> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      created.onclose = () => created.sessionId && sessions.delete(created.sessionId);
      await build().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`,
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}
