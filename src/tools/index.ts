import { recipesImplementations } from './recipes/index.ts';
import { supportImplementations } from './support.ts';
import type { ToolImplementation } from './types.ts';

/** Every tool the worker can run, by name; the agents' specs say which agent may call which. */
export const toolImplementations: Record<string, ToolImplementation> = {
  ...supportImplementations,
  ...recipesImplementations,
};
