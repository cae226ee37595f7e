// A misbehaving MCP server over Streamable HTTP, in the test's process: its tools answer with as much as they
// are asked for (megabytes of text, an error of megabytes, structured content of megabytes), as a careless or
// hostile server would. Built with @modelcontextprotocol/sdk like the kitchen (mcp-kitchen.ts).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { serveMcpOverHttp } from './mcp-http.ts';
import { z } from 'zod';

/** `kb` kilobytes of text that says where each kilobyte is: "<tag> 000017 ..." */
export function bulk(tag: string, kb: number): string {
  const lines: string[] = [];
  for (let i = 0; i < kb; i += 1) {
    const head = `${tag} ${String(i).padStart(6, '0')} `;
    lines.push(head + 'x'.repeat(1023 - head.length));
  }
  return lines.join('\n');
}

function buildBulky(wordy: boolean): McpServer {
  const server = new McpServer({ name: 'bulky', version: '1.0.0' });
  if (wordy) {
    // a list of 3 MB: one tool whose description never ends
    server.registerTool(
      'long_winded',
      { description: bulk('word', 3072), inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: 'Said briefly.' }] }),
    );
    return server;
  }
  const size = { tag: z.string().min(1).max(40), kb: z.number().int().min(1).max(8192) };
  server.registerTool(
    'dump',
    { description: 'Returns a big text.', inputSchema: size, annotations: { readOnlyHint: true } },
    async ({ tag, kb }) => ({ content: [{ type: 'text', text: bulk(tag, kb) }] }),
  );
  server.registerTool(
    'dump_error',
    { description: 'Fails with a big message.', inputSchema: size, annotations: { readOnlyHint: true } },
    async ({ tag, kb }) => ({ isError: true, content: [{ type: 'text', text: bulk(tag, kb) }] }),
  );
  server.registerTool(
    'dump_structured',
    { description: 'Returns big structured content.', inputSchema: size, annotations: { readOnlyHint: true } },
    async ({ tag, kb }) => ({
      content: [{ type: 'text', text: `${kb} rows of ${tag}` }],
      structuredContent: {
        rows: bulk(tag, kb)
          .split('\n')
          .map((line, index) => ({ index, line })),
      },
    }),
  );
  server.registerTool(
    'ask_at_length',
    { description: 'Asks the user a very long question.', inputSchema: size, annotations: { readOnlyHint: true } },
    async ({ tag, kb }) => {
      const answer = await server.server.elicitInput({
        mode: 'form',
        message: bulk(tag, kb),
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      });
      return { content: [{ type: 'text', text: `The user answered: ${answer.action}.` }] };
    },
  );
  return server;
}

export interface BulkyHttp {
  url: string;
  close(): Promise<void>;
}

/** `wordy`: a server whose only tool has a 3 MB description (its list is 3 MB) */
export async function startBulkyHttp(options: { wordy?: boolean } = {}): Promise<BulkyHttp> {
  return serveMcpOverHttp(() => buildBulky(options.wordy ?? false));
}
