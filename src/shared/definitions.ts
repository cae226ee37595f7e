// Message definitions shared by the client (API) and the workflow, as in the Temporal samples.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ConversationState, DecisionInput, SendMessageInput, TurnResult } from './messages.ts';

/** A user turn; returns the turn's new messages once it ends or parks on a pending item. */
export const sendMessageUpdate = defineUpdate<TurnResult, [SendMessageInput]>('sendMessage');
/** A decision from the API; returns what the turn did next, like a turn. */
export const decideUpdate = defineUpdate<TurnResult, [DecisionInput]>('decide');
/** The same decision from the Temporal Web UI or CLI; a bad payload is recorded and ignored. */
export const decisionSignal = defineSignal<[unknown]>('decision');
export const stateQuery = defineQuery<ConversationState>('state');

export const chatSessionWorkflowId = (conversationId: string) => `conversation-${conversationId}`;
