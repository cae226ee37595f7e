// A misbehaving MCP server over Streamable HTTP, built with @modelcontextprotocol/sdk:
//   never_answers   takes the call and never answers (nor fails)
//   slow_simmer     answers after `simmerMs` (a test presses Stop meanwhile); `finished` counts the ones it completed
//   ask_then_work   asks the user something (elicitation), then works `afterQuestionMs` before answering
// Every call is counted by tool, and the `notifications/cancelled` the client sends are kept.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { serveMcpOverHttp } from './mcp-http.ts';
import { z } from 'zod';

export interface SluggishServer {
  url: string;
  /** calls received, by tool */
  calls: Record<string, number>;
  /** slow_simmer calls the server went on to complete (Stop or not) */
  finished: number;
  /** calls the client cancelled (notifications/cancelled) */
  cancelled: number;
  simmerMs: number;
  afterQuestionMs: number;
  close(): Promise<void>;
}

export async function startSluggishServer(): Promise<SluggishServer> {
  const state: SluggishServer = {
    url: '',
    calls: {},
    finished: 0,
    cancelled: 0,
    simmerMs: 8_000,
    afterQuestionMs: 0,
    close: async () => undefined,
  };
  const count = (tool: string) => (state.calls[tool] = (state.calls[tool] ?? 0) + 1);
  const build = () => {
    const server = new McpServer({ name: 'sluggish', version: '1.0.0' });
    server.registerTool(
      'never_answers',
      { description: 'Takes the call and never answers.', inputSchema: { what: z.string() }, annotations: { readOnlyHint: true } },
      async (_args, extra) => {
        count('never_answers');
        extra.signal.addEventListener('abort', () => (state.cancelled += 1));
        return new Promise(() => undefined);
      },
    );
    server.registerTool(
      'slow_simmer',
      { description: 'Simmers the stock, slowly.', inputSchema: { minutes: z.number() }, annotations: { readOnlyHint: true } },
      async (args, extra) => {
        count('slow_simmer');
        extra.signal.addEventListener('abort', () => (state.cancelled += 1));
        // it goes on whether or not the client still listens, as a real server's side effect would
        await new Promise((resolve) => setTimeout(resolve, state.simmerMs));
        state.finished += 1;
        return { content: [{ type: 'text', text: `Simmered for ${args.minutes} minutes.` }] };
      },
    );
    server.registerTool(
      'ask_then_work',
      { description: 'Asks which pot, then works.', inputSchema: { dish: z.string() }, annotations: { readOnlyHint: true } },
      async (args) => {
        count('ask_then_work');
        const answer = await server.server.elicitInput({
          mode: 'form',
          message: 'Which pot?',
          requestedSchema: { type: 'object', properties: { pot: { type: 'string' } }, required: ['pot'] },
        });
        await new Promise((resolve) => setTimeout(resolve, state.afterQuestionMs));
        return { content: [{ type: 'text', text: `Cooked ${args.dish} in the ${String(answer.content?.pot ?? 'no')} pot.` }] };
      },
    );
    return server;
  };
  const served = await serveMcpOverHttp(build);
  state.url = served.url;
  state.close = served.close;
  return state;
}
