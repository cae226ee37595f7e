// Request and response bodies of the HTTP API; the OpenAPI document is generated from these.
import { z } from 'zod';
import { isStorableText, UNSTORABLE_MESSAGE } from '../shared/safe-text.ts';
import { AgentName, ChatMessage, ConversationStatus, PendingItem, TurnResult, Usage } from '../shared/messages.ts';
import { SousCreateFields, SousViewFields } from './sous-schemas.ts';
import { BudgetView } from './budget-view.ts';

export { DecisionInput as DecisionBody, SendMessageInput as MessageBody } from '../shared/messages.ts';

export const CreateConversationBody = z
  .object({
    agent: AgentName,
    title: z.string().trim().min(1).max(200).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
    /** the beer agent's bar; must match the token's client when the token names one */
    client: z.string().trim().min(1).max(100).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
    ...SousCreateFields.shape,
  })
  .superRefine(SousCreateFields.check);

export const CreatedConversation = z.object({ id: z.uuid(), agent: AgentName, workflowId: z.string() });

export const ConversationView = z.object({
  id: z.uuid(),
  agent: AgentName,
  title: z.string(),
  workflowId: z.string(),
  createdAt: z.string(),
  status: ConversationStatus,
  messages: z.array(ChatMessage),
  pending: z.array(PendingItem),
  usage: Usage,
  /** spending against the token budgets, when one is set */
  budget: BudgetView.optional(),
  ...SousViewFields.shape,
});

export const ConversationSummary = CreatedConversation.extend({ title: z.string(), createdAt: z.string() });

export const ErrorBody = z.object({
  error: z.string(),
  /** on a 5xx: the X-Request-Id under which the failure was logged */
  requestId: z.string().optional(),
  fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

export { TurnResult };
