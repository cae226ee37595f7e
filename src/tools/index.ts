import { beerImplementations } from '../agents/beer/implementations.ts';
import { recipesImplementations } from '../agents/recipes/implementations.ts';
import { supportImplementations } from '../agents/support/implementations.ts';
import type { ToolImplementation } from '../activities/tool-context.ts';

/** Every tool the worker can run, by name; the agents' specs say which agent may call which. */
export const toolImplementations: Record<string, ToolImplementation> = {
  ...supportImplementations,
  ...recipesImplementations,
  ...beerImplementations,
};
