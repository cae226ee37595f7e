// A misbehaving MCP server over Streamable HTTP, in the test's process: its tools' inputSchemas carry what a
// hostile server writes. The low-level Server is used so the schemas go out exactly as written here (the
// high-level McpServer would rewrite them from zod, and check calls with JavaScript's RegExp itself).
//   match_word   `word` must match ^(a+)+$ (catastrophic on a backtracking engine: "aaaa…a!")
//   label        a property named "pattern", names starting x- (patternProperties) must be numbers, nothing else
// Every call that reaches the server is recorded in `calls`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { serveMcpOverHttp } from './mcp-http.ts';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const CATASTROPHIC = '^(a+)+$';

const TOOLS = [
  {
    name: 'match_word',
    description: "Says whether a word is all a's.",
    inputSchema: { type: 'object', properties: { word: { type: 'string', pattern: CATASTROPHIC } }, required: ['word'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'label',
    description: 'Labels something.',
    inputSchema: {
      type: 'object',
      properties: { pattern: { type: 'string', description: 'a property that is named pattern' } },
      patternProperties: { '^x-': { type: 'number' } },
      additionalProperties: false,
      required: ['pattern'],
    },
    annotations: { readOnlyHint: true },
  },
];

export interface PatternsServer {
  url: string;
  calls: { tool: string; args: Record<string, unknown> }[];
  close(): Promise<void>;
}

function build(calls: PatternsServer['calls']): Server {
  const server = new Server({ name: 'patterns', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    calls.push({ tool: request.params.name, args });
    return { content: [{ type: 'text', text: `${request.params.name} ran with ${JSON.stringify(args).slice(0, 200)}` }] };
  });
  return server;
}

export async function startPatternsServer(): Promise<PatternsServer> {
  const calls: PatternsServer['calls'] = [];
  const served = await serveMcpOverHttp(() => build(calls));
  return { ...served, calls };
}
