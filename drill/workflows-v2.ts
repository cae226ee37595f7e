// "Version 2" of the workflow code for the upgrade drill: chatSession waits on a timer before anything else.
// Replayed against a history that version 1 wrote, that timer is a command the history does not have: a
// nondeterminism error. So version 2 can only take conversations over by Worker Versioning's rules (pinned
// runs stay on version 1; a run moves at continue-as-new), which is what the drill proves.
import { sleep } from '@temporalio/workflow';
import { chatSession as versionOne } from '../src/workflows/index.ts';
import type { ChatSessionInput } from '../src/shared/messages.ts';

export * from '../src/workflows/index.ts';

export async function chatSession(input: ChatSessionInput): Promise<void> {
  await sleep(1);
  return versionOne(input);
}
