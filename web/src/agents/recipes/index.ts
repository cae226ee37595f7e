// The recipes agent: recipes saved and found.
import type { AgentHome } from '../../agentHome';

export const recipes: AgentHome = { label: 'Recipes' };
