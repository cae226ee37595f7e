// Which tools each agent may call and which role may open it. Plain data so the workflow can import it.
import type { AgentKernel } from './agent-kernel.ts';
import type { AgentName } from './messages.ts';
import type { ToolSpec } from './tool-spec.ts';
import { sousKernel } from '../agents/sous/kernel.ts';
import { recipesTools } from '../agents/recipes/tools.ts';
import { beerTools } from '../agents/beer/tools.ts';
import { supportTools } from '../agents/support/tools.ts';

export interface AgentSpec {
  name: AgentName;
  tools: ToolSpec[];
  /** a token must carry this role to open a conversation with the agent */
  requiredRole?: string;
  /** an agent that keeps state of its own and answers in JSON (sous) */
  kernel?: AgentKernel;
}

export const AGENT_SPECS: Record<AgentName, AgentSpec> = {
  recipes: { name: 'recipes', tools: recipesTools },
  sous: { name: 'sous', tools: [], kernel: sousKernel },
  beer: { name: 'beer', tools: beerTools },
  support: { name: 'support', tools: supportTools, requiredRole: 'support' },
};

export function findTool(agent: AgentName, name: string): ToolSpec | undefined {
  return AGENT_SPECS[agent].tools.find((tool) => tool.name === name);
}
