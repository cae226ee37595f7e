// The sous agent: cooks along one recipe, keeping it as state of its own (its kernel) and proposing
// changes as PatchSets the cook accepts or rejects between turns.
import { z } from 'zod';
import { defineAgent } from '../../shared/agent-spec.ts';
import { sousKernel } from './kernel.ts';

export const sousAgent = defineAgent({
  name: 'sous',
  tools: [],
  kernel: sousKernel,
  pendingKinds: {
    // A PatchSet outlives the turn that proposed it and is decided between turns; a message leaves it open.
    patchset: { scope: 'conversation', messageIsAnswer: false, fromMessage: () => undefined },
  },
  // its events' data, for whoever reads the conversation's log
  events: {
    'patchset.rejected': z.looseObject({ patchSetId: z.string(), reasons: z.array(z.unknown()) }),
    'patchset.decided': z.looseObject({ patchSetId: z.string() }),
    'state.changed': z.looseObject({ change: z.string() }),
  },
});
