// Decisions on pending items (the decide Update from the API, the decision Signal from the Web UI and CLI),
// actions on a stateful agent's own state, and the items child workflows ask this conversation to open.
import { getExternalWorkflowHandle, log, patched, setHandler, uuid4 } from '@temporalio/workflow';
import { OpenPendingRequest } from '../shared/child-tool.ts';
import { agentActionUpdate, decideUpdate, decisionSignal, openPendingSignal, pendingOutcomeSignal } from '../shared/definitions.ts';
import { boundTurnResult } from '../shared/payload-bounds.ts';
import { describeError } from '../shared/log-safe.ts';
import { describeIssues } from '../shared/tool-spec.ts';
import { type ItemOutcome, itemForChild } from './pending-items.ts';
import { type Session, conversationState } from './session.ts';

export function handleDecisions(session: Session): void {
  const { loop, pending, events, agentState } = session;
  setHandler(
    decideUpdate,
    async (raw) => {
      const logStart = loop.logLength;
      const decision = pending.check(raw);
      const said = agentState.decide(decision);
      if (!said) {
        // a turn's item: the decision is an event of the turn machine, which ends its wait
        loop.decided(decision);
        return loop.waitForBoundary(logStart);
      }
      await events.flush();
      if (!loop.active) loop.idleDetails();
      return boundTurnResult({ messages: said, pending: pending.items() });
    },
    {
      validator: (decision) => void pending.check(decision),
      description: 'Decide a pending item; answers with what the turn did next.',
    },
  );

  setHandler(
    decisionSignal,
    async (payload) => {
      try {
        const decision = pending.check(payload);
        if (!agentState.decide(decision)) loop.decided(decision);
      } catch (error) {
        // A bad signal must never fail the workflow: record why it was ignored and move on.
        const reason = error instanceof Error ? error.message : String(error);
        // the reason (which may quote the signal's arguments) goes to the conversation's event; the log, its kind
        log.warn('Ignored a decision signal', { reason: describeError(error) });
        events.signalRejected(`signal-rejected:${uuid4()}`, reason, payload);
      }
      if (!loop.active) await events.flush();
    },
    {
      description:
        'A decision from the Web UI or CLI: {"pendingId": "<id from the state query>", "decision": "approve" | "reject" | "edit" | "yes" | "no" | "accept" | "decline" | "cancel", "reason"?, "args"? (edit; an answer to a question), "choice"? (yes)}. A bad payload is recorded as a signal.rejected event and ignored.',
    },
  );

  setHandler(
    agentActionUpdate,
    async ({ name, args }) => {
      agentState.act(name, args);
      await events.flush();
      if (!loop.active) loop.idleDetails();
      return conversationState(session);
    },
    {
      // Kernels are pure, so the validator can run the action on a dry context and refuse what would fail.
      validator: ({ name, args }) => agentState.checkAction(name, args),
      description: 'An action on the agent\'s own state outside a turn, e.g. {"name": "markStepDone", "args": {"stepId": "s2"}}.',
    },
  );

  setHandler(
    openPendingSignal,
    (raw) => {
      const parsed = OpenPendingRequest.safeParse(raw);
      // the wire's kinds are open strings: the catalog says which ones mean something
      const unknownKind = parsed.success && !session.catalog.pendingKind(parsed.data.kind);
      if (!parsed.success || !session.children.has(parsed.data.owner) || unknownKind) {
        const reason = !parsed.success
          ? describeIssues(parsed.error)
          : unknownKind
            ? `openPending of kind "${parsed.data.kind}", which no agent of the catalog declares`
            : 'openPending from a workflow this conversation is not running';
        events.signalRejected(`signal-rejected:${uuid4()}`, reason, raw);
        return;
      }
      const request = parsed.data;
      const item = itemForChild(request, Date.now());
      // A child whose turn was stopped (or left on another branch) asks no one: the machine withdraws it at once.
      const outlived = session.children.outlived(request.owner) && patched('stopped-child-asks-no-one');
      const asked: Promise<ItemOutcome> = loop.ask(item, request.deadlineMs, request.onTimeout, outlived);
      void asked.then(async (outcome) => {
        try {
          await getExternalWorkflowHandle(request.owner).signal(pendingOutcomeSignal, { requestId: request.requestId, ...outcome });
        } catch (error) {
          log.warn('The child that asked for a pending item is gone', { owner: request.owner, reason: describeError(error) });
        }
      });
    },
    {
      description:
        'From a child workflow of this conversation, sent by askParent: {"requestId", "owner": "<the child\'s workflow ID>", "kind", "tool", "callId", "args", "decisions", "deadlineMs", "onTimeout", "prompt"?, "options"?, "details"?}. From any other workflow, or malformed, it is recorded as a signal.rejected event and ignored.',
    },
  );
}
