// For a child workflow started as a tool: ask the conversation to open a pending item (a confirmation) and
// wait for how it ended. The conversation owns the deadline, so there is one clock and one answer.
import { condition, getExternalWorkflowHandle, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ChildToolInput, OpenPendingRequest, PendingOutcome } from '../shared/child-tool.ts';
import { openPendingSignal, pendingOutcomeSignal } from '../shared/definitions.ts';

export type AskRequest = Omit<OpenPendingRequest, 'requestId' | 'owner' | 'callId'>;

/** Call once at the top of the child workflow (it installs the outcome handler); ask as often as needed. */
export function parentAsker(input: ChildToolInput): (request: AskRequest) => Promise<PendingOutcome> {
  const outcomes = new Map<string, PendingOutcome>();
  setHandler(pendingOutcomeSignal, (outcome) => void outcomes.set(outcome.requestId, outcome), {
    description: 'From the conversation: how a pending item this workflow asked for ended.',
  });
  return async (request) => {
    const requestId = uuid4();
    await getExternalWorkflowHandle(input.parentWorkflowId).signal(openPendingSignal, {
      ...request,
      requestId,
      owner: workflowInfo().workflowId,
      callId: input.callId,
    });
    // The parent always answers, at the latest when its deadline passes; the margin only guards against a
    // parent that is gone (terminated), so the child cannot wait forever.
    const answered = await condition(() => outcomes.has(requestId), request.deadlineMs + 60_000);
    if (!answered) return { requestId, decision: { pendingId: requestId, decision: request.onTimeout }, timedOut: true };
    return outcomes.get(requestId)!;
  };
}
