// The runtime's workflows over a catalog of agents. The workflow bundle's entry, generated from the catalog
// (stack/bundle-workflows.ts), builds the catalog from the agents' specs and exports these under their
// workflow types (`chatSession`, `retentionSweep`, `scheduledRun`) beside the agents' child workflows: the names recorded
// histories hold, never renamed.
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import { createChatSession } from './chat-session.ts';
import { retentionSweep } from './retention-sweep.ts';
import { scheduledRun } from './scheduled-run.ts';

export function defineWorkflows(catalog: AgentCatalog) {
  return { chatSession: createChatSession(catalog), retentionSweep, scheduledRun };
}
