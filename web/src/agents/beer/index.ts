// The beer agent: brewery recommendations for a bar.
import type { AgentHome } from '../../agentHome';

export const beer: AgentHome = { label: 'Beer' };
