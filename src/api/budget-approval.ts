// BUDGET_APPROVER_ROLE: a budget item lets a turn spend past a limit, so the one who spends does not approve
// it. With the setting, POST /v1/conversations/{id}/decisions refuses the conversation's own user an
// `approve` of a budget item (403; reject stays theirs, as a message or Stop end the turn anyway), and lets a
// user with the role, who cannot otherwise see the conversation, decide that item and nothing else: they learn
// neither the transcript nor the turn's answer, only that the decision was taken.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowUpdateStage } from '@temporalio/client';
import type { DecisionInput, PendingItem } from '../shared/messages.ts';
import { chatSessionWorkflowId, decideUpdate, stateQuery } from '../shared/definitions.ts';
import type { ChatSession } from '../workflows/chat-session.ts';
import { z } from 'zod';
import type { Principal } from './auth.ts';
import { HttpError, notFound } from './http-error.ts';

/** What an approver's decision answers: taken, and nothing of the conversation. */
export const BudgetApproval = z.object({ pendingId: z.string(), decision: z.string(), accepted: z.literal(true) });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The pending item a decision names, from the conversation's state. */
async function itemOf(handle: WorkflowHandle<ChatSession>, decision: DecisionInput): Promise<PendingItem | undefined> {
  const state = await handle.query(stateQuery);
  return state.pending.find((item) => item.id === decision.pendingId);
}

/** The spender's own decision: refused when it approves a budget item and someone else must. */
export async function refuseSelfApproval(role: string, handle: WorkflowHandle<ChatSession>, decision: DecisionInput): Promise<void> {
  if (decision.decision !== 'approve') return;
  const item = await itemOf(handle, decision);
  if (item?.kind === 'budget') {
    throw new HttpError(403, `A budget item is approved by a user with the "${role}" role, not by the user whose turn spends it`);
  }
}

/**
 * An approver's decision on another user's conversation: only a budget item that is pending there. Anything
 * else answers 404, as a conversation that is not theirs does. Answers once the workflow accepted it.
 */
export async function approverDecision(
  client: Client,
  role: string,
  principal: Principal,
  conversationId: string,
  decision: DecisionInput,
): Promise<z.infer<typeof BudgetApproval>> {
  if (!principal.roles.includes(role) || !UUID.test(conversationId)) throw notFound();
  const handle = client.workflow.getHandle(chatSessionWorkflowId(conversationId)) as WorkflowHandle<ChatSession>;
  const item = await itemOf(handle, decision).catch(() => undefined);
  if (item?.kind !== 'budget') throw notFound();
  await handle.startUpdate(decideUpdate, { args: [decision], waitForStage: WorkflowUpdateStage.ACCEPTED });
  return { pendingId: decision.pendingId, decision: decision.decision, accepted: true };
}
