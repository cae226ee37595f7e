// Request and response bodies of the HTTP API; the OpenAPI document is generated from these.
import { z } from 'zod';
import { isStorableText, UNSTORABLE_MESSAGE } from '../shared/safe-text.ts';
import { AGENT_SERVERS } from '../agents/server-registry.ts';
import { agentNames } from '../agents/registry.ts';
import type { CreateBody } from '../agent-server.ts';
import { type AgentName, ChatMessage, ConversationStatus, PendingItem, TurnResult, Usage } from '../shared/messages.ts';
import { BudgetView, UsageView } from './budget-view.ts';

export { DecisionInput as DecisionBody, SendMessageInput as MessageBody } from '../shared/messages.ts';

/** The registered agents' names, as the enum an unknown name is refused with. */
const agentEnum = () => z.enum(agentNames() as [AgentName, ...AgentName[]]);

/**
 * POST /v1/conversations: the generic fields and every agent's own (each only for its agent). Made from
 * the registry when the API starts, so an agent registered before then (a test's) is in it.
 */
export function createConversationBody(): z.ZodType<CreateBody> {
  const servers = [...AGENT_SERVERS.values()];
  const own = servers.flatMap((server) => Object.keys(server.create?.fields ?? {}).map((field) => [field, server.name] as const));
  return z
    .object({
      agent: agentEnum(),
      title: z.string().trim().min(1).max(200).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
      /** the conversation's client (the beer agent's bar); must match the token's client when the token names one */
      client: z.string().trim().min(1).max(100).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
      ...Object.assign({}, ...servers.map((server) => server.create?.fields ?? {})),
    })
    .superRefine((body, ctx) => {
      const fields = body as CreateBody;
      for (const [field, agent] of own) {
        if (fields.agent !== agent && fields[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `only for the ${agent} agent` });
      }
      for (const server of servers) server.create?.check?.(fields, ctx);
    }) as unknown as z.ZodType<CreateBody>;
}

/** PATCH /v1/conversations/:id: a new title, the same rules as a title given at creation. */
export const RenameBody = z.strictObject({ title: z.string().trim().min(1).max(200).refine(isStorableText, UNSTORABLE_MESSAGE) });
export const RenamedBody = z.object({ id: z.uuid(), title: z.string() });

export const createdConversation = () => z.object({ id: z.uuid(), agent: agentEnum(), workflowId: z.string() });

/** GET /v1/conversations/:id: the generic view and the fields each agent's kernel view adds. */
export const conversationView = () =>
  z.object({
    id: z.uuid(),
    agent: agentEnum(),
    title: z.string(),
    workflowId: z.string(),
    createdAt: z.string(),
    status: ConversationStatus,
    messages: z.array(ChatMessage),
    pending: z.array(PendingItem),
    usage: UsageView,
    /** spending against the budgets (tokens, money), when one is set */
    budget: BudgetView.optional(),
    ...Object.assign({}, ...[...AGENT_SERVERS.values()].map((server) => server.view?.shape ?? {})),
  });

export const conversationSummary = () => createdConversation().extend({ title: z.string(), createdAt: z.string() });

export const ErrorBody = z.object({
  error: z.string(),
  /** on a 5xx: the X-Request-Id under which the failure was logged */
  requestId: z.string().optional(),
  fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

export { TurnResult };
