// The echo agent in the server processes: its tool's implementation (typed from its tool list), the
// offline model's phrasing for it, and where its system prompt lives.
import type { ToolContext, ToolImplementations } from '../../../src/activities/tool-context.ts';
import { defineAgentServer } from '../../../src/agent-server.ts';
import { ECHO_TEXT, type echoTools } from './spec.ts';

const implementations: ToolImplementations<typeof echoTools> = {
  [ECHO_TEXT]: async (args: { text: string }, context: ToolContext) => ({
    echoed: args.text.toUpperCase(),
    length: args.text.length,
    conversation: context.conversationId,
  }),
};

export const echoServer = defineAgentServer({
  name: 'echo',
  implementations,
  prompts: new URL('./prompts/', import.meta.url),
  offline: {
    phrases: [{ tool: ECHO_TEXT, examples: ['echo hello there'] }],
    describe: {
      [ECHO_TEXT]: (value) => {
        const result = value as { echoed?: unknown; length?: unknown };
        return typeof result.echoed === 'string' ? `Echo: ${result.echoed} (${String(result.length)} characters)` : undefined;
      },
    },
    // after every built-in agent's phrasings
    rules: [
      {
        rank: 100,
        tool: ECHO_TEXT,
        match: (text) => {
          const said = /^\s*echo\s+(.+)$/i.exec(text)?.[1];
          return said ? { text: said } : undefined;
        },
      },
    ],
  },
});
