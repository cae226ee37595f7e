// Tools the runtime gives every agent, beside the agent's own: declared here (plain data, so the workflow finds
// them by name as it finds an agent's), run by the runTool activity (src/activities/runtime-tools.ts).
import { z } from 'zod';
import { AUTO, defineTool } from './tool-spec.ts';

/**
 * Reads back a message the model's context shows as a stub or cut (src/context/window.ts): old tool results are
 * sent as `{ elided: true, id, ... }` once a conversation grows, and the whole message stays in the transcript.
 */
export const recallTool = defineTool({
  name: 'recall',
  description:
    'Read again a message of this conversation that your context shows only as a stub (`elided: true`) or cut, by the id the stub gives. ' +
    'Returns the message as it was (a tool result, or what was said).',
  args: z.object({ id: z.string().min(1).max(200).describe('the id given in the stub') }),
  policy: AUTO,
});

export const RUNTIME_TOOLS = [recallTool] as const;

export const runtimeTool = (name: string) => RUNTIME_TOOLS.find((tool) => tool.name === name);
