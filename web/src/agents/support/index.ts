// Support: its tools' approvals are the generic approval card, so a label is all it adds.
import type { AgentHome } from '../../agentHome';

export const support: AgentHome = { label: 'Support' };
