// The sous chef: the recipe beside the chat, PatchSets reviewed in place, and where a conversation starts.
import type { AgentHome } from '../../agentHome';
import { PatchReview } from './PatchReview';
import { SousPanel } from './SousPanel';
import { sousStart } from './SousStart';

export const sous: AgentHome = {
  label: 'Sous chef',
  description: 'Cooks one of your recipes with you: proposes changes you review before they are made, step by step.',
  firstPrompt: 'make it for 4',
  SidePanel: SousPanel,
  // the chat goes on while a PatchSet waits: a message does not answer it
  pendingKinds: { patchset: { View: PatchReview, label: 'Proposed change', answeredByMessage: false } },
  start: sousStart,
  examples: [
    'swap butter for olive oil',
    'make it for 4',
    'remove the parmesan',
    'add 1 tsp chili flakes',
    'add a note: rest the dough overnight',
  ],
  refreshOn: ['patchset.decided', 'patchset.rejected'],
};
