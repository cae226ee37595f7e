// "Version 2" of the workflow code for the upgrade drill: chatSession waits on a timer before anything else.
// Replayed against a history that version 1 wrote, that timer is a command the history does not have: a
// nondeterminism error. So version 2 can only take conversations over by Worker Versioning's rules (pinned
// runs stay on version 1; a run moves at continue-as-new), which is what the drill proves.
// A bundle variant (stack/bundle-workflows.ts): the catalog's entry passes it the runtime's workflows.
import { sleep } from '@temporalio/workflow';
import type { defineWorkflows } from '../src/workflows/define-workflows.ts';

type Workflows = ReturnType<typeof defineWorkflows>;

export function variant(versionOne: Workflows): Workflows {
  return {
    ...versionOne,
    async chatSession(input) {
      await sleep(1);
      return versionOne.chatSession(input);
    },
  };
}
