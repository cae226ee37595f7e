// A fifth agent that lives in the test suite, plugged in exactly as the four in src/agents are: a spec
// (this file), a server side (server.ts), and registration (register.ts) instead of a registry line.
import { z } from 'zod';
import { defineAgent } from '../../../src/shared/agent-spec.ts';
import { AUTO, defineTool } from '../../../src/shared/tool-spec.ts';

declare module '../../../src/shared/messages.ts' {
  // what the registry's list does for the built-in agents
  interface AgentNames {
    echo: true;
  }
}

export const ECHO_TEXT = 'echo_text';

export const echoTextSpec = defineTool({
  name: ECHO_TEXT,
  description: 'Says the text back, upper-cased, with its length.',
  args: z.object({ text: z.string().trim().min(1).max(200).describe('The text to say back') }),
  policy: AUTO,
});

export const echoTools = [echoTextSpec];

export const echoAgent = defineAgent({ name: 'echo', tools: echoTools });
