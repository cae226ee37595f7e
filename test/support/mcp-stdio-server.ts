// The kitchen MCP server over stdio, as a worker starts it (`node test/support/mcp-stdio-server.ts`). Each
// call is appended to $KITCHEN_CALL_LOG as a JSON line, so a test can count what the server saw.
import fs from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildKitchen } from './mcp-kitchen.ts';

const log = process.env.KITCHEN_CALL_LOG;
const server = buildKitchen({
  onCall: (call) => log && fs.appendFileSync(log, `${JSON.stringify({ ...call, pid: process.pid })}\n`),
  powerCut: () => process.exit(1),
});
await server.connect(new StdioServerTransport());
