// Message definitions shared by the client (API) and the workflow, as in the Temporal samples.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { StopResult } from './turn-control.ts';
import type {
  BranchTurnInput,
  ConversationState,
  DecisionInput,
  JsonObject,
  SendMessageInput,
  SwitchBranchInput,
  TurnResult,
} from './messages.ts';
import type { OpenPendingRequest, PendingOutcome } from './child-tool.ts';

/** A user turn; returns the turn's new messages once it ends or parks on a pending item. */
export const sendMessageUpdate = defineUpdate<TurnResult, [SendMessageInput]>('sendMessage');
/** An edit or a regenerate: the conversation's leaf moves, then a turn runs from there; returns the turn like sendMessage. */
export const branchTurnUpdate = defineUpdate<TurnResult, [BranchTurnInput]>('branchTurn');
/** Another branch becomes current; returns the new leaf. */
export const switchBranchUpdate = defineUpdate<{ leafId: string | null }, [SwitchBranchInput]>('switchBranch');
/** A decision from the API; returns what the turn did next, like a turn. */
export const decideUpdate = defineUpdate<TurnResult, [DecisionInput]>('decide');
/**
 * The same decision from the Temporal Web UI or CLI: {"pendingId": "<id from the state query or the
 * pending.opened event>", "decision": "approve" | "reject" | "edit" | "yes" | "no" | "accept", "reason"?,
 * "args"? (edit), "choice"? (yes)}. A bad payload is recorded as a signal.rejected event and ignored.
 */
export const decisionSignal = defineSignal<[unknown]>('decision');
/** Stop from the API: ends the running turn; answers once it has ended, { stopped: false } when none ran. */
export const stopUpdate = defineUpdate<StopResult, []>('stop');
/** Stop from the Temporal Web UI or CLI (no payload needed; any payload is ignored). */
export const stopSignal = defineSignal<[unknown?]>('stop');
export const stateQuery = defineQuery<ConversationState>('state');
/**
 * Wakes an idle conversation so that it sees a new current worker version and continues as new on it (the
 * deploy's drain step sends it to every conversation pinned to the old version). No payload.
 */
export const upgradeSignal = defineSignal<[unknown?]>('upgrade');
/** A stateful agent's state as the run holds it (what continue-as-new would carry): what revival starts from. */
export const agentStateQuery = defineQuery<{ agentState?: unknown }>('agentState');

/** An action on a stateful agent's state outside a turn ({"name": "markStepDone", "args": {"stepId": "s2"}}). */
export const agentActionUpdate = defineUpdate<ConversationState, [{ name: string; args: JsonObject }]>('agentAction');

/** From a child workflow that the conversation started: open a pending item for it (see askParent). */
export const openPendingSignal = defineSignal<[OpenPendingRequest]>('openPending');
/** To that child: how its item ended (decided, superseded by a message, or timed out). */
export const pendingOutcomeSignal = defineSignal<[PendingOutcome]>('pendingOutcome');

/**
 * A conversation's workflow task timeout. Its model step runs within a workflow task (a local activity), and
 * what arrives meanwhile (the Stop signal from the Web UI, a message) waits for that task to end or to be
 * heartbeaten, which the worker does at 80 % of this: a shorter timeout than the server's 10 s default lets it
 * in within about 3 s. A task without a model step takes milliseconds, far below it.
 */
export const CHAT_SESSION_TASK_TIMEOUT = '4s';

export const chatSessionWorkflowId = (conversationId: string) => `conversation-${conversationId}`;
