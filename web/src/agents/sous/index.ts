// The sous chef: the recipe beside the chat, PatchSets reviewed in place, and where a conversation starts.
import type { AgentHome } from '../../agentHome';
import { sousExamples } from './examples';
import { PatchReview } from './PatchReview';
import { SousPanel } from './SousPanel';
import { sousStart } from './SousStart';
import { sousViewOf } from './sousView';

export const sous: AgentHome = {
  label: 'Sous chef',
  description: 'Cooks one of your recipes with you: proposes changes you review before they are made, step by step.',
  firstPrompt: 'make it for 4',
  SidePanel: SousPanel,
  // the chat goes on while a PatchSet waits: a message does not answer it
  pendingKinds: { patchset: { View: PatchReview, label: 'Proposed change', answeredByMessage: false } },
  start: sousStart,
  examplesOf: (view) => sousExamples(sousViewOf(view).recipe),
  refreshOn: ['patchset.decided', 'patchset.rejected'],
};
