// Request and response bodies of the HTTP API; the OpenAPI document is generated from these.
import { z } from 'zod';
import { isStorableText, plainName, UNSTORABLE_MESSAGE } from '../shared/safe-text.ts';
import type { CreateBody, ServerCatalog } from './agent-server.ts';
import { ChatMessage, ConversationStatus, HeldMessage, PendingItem, SendMessageInput, TurnResult, Usage } from '../shared/messages.ts';
import { BudgetView, UsageView } from './budget-view.ts';

export { DecisionInput as DecisionBody, SendMessageInput as MessageBody } from '../shared/messages.ts';

const MessageText = SendMessageInput.shape.text;

/** The catalog's agents' names, as the enum an unknown name is refused with. */
const agentEnum = (catalog: Pick<ServerCatalog, 'names'>) => z.enum(catalog.names() as [string, ...string[]]);

/**
 * POST /v1/conversations: the generic fields and every agent's own (each only for its agent). Made from
 * the catalog the API is made with, so an agent of the composition root's list (a test's too) is in it.
 */
export function createConversationBody(catalog: ServerCatalog): z.ZodType<CreateBody> {
  const servers = catalog.servers;
  const own = servers.flatMap((server) => Object.keys(server.create?.fields ?? {}).map((field) => [field, server.name] as const));
  return z
    .object({
      agent: agentEnum(catalog),
      title: plainName(200).optional(),
      /** the conversation's client (the beer agent's bar); must match the token's client when the token names one */
      client: z.string().trim().min(1).max(100).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
      ...Object.assign({}, ...servers.map((server) => server.create?.fields ?? {})),
    })
    .superRefine((body, ctx) => {
      const fields = body as CreateBody;
      for (const [field, agent] of own) {
        if (fields.agent !== agent && fields[field] !== undefined)
          ctx.addIssue({ code: 'custom', path: [field], message: `only for the ${agent} agent` });
      }
      for (const server of servers) server.create?.check?.(fields, ctx);
    }) as unknown as z.ZodType<CreateBody>;
}

/** PATCH /v1/conversations/:id: a new title, the same rules as a title given at creation. */
export const RenameBody = z.strictObject({ title: plainName(200) });
export const RenamedBody = z.object({ id: z.uuid(), title: z.string() });

export const createdConversation = (catalog: ServerCatalog) =>
  z.object({ id: z.uuid(), agent: agentEnum(catalog), workflowId: z.string() });

/**
 * What GET says a conversation is doing: its run's own status, or `interrupted` when the run has ended, is gone or is
 * stuck, so the view comes from PostgreSQL and the next message revives it (src/api/revival.ts).
 */
export const ConversationViewStatus = z.enum([...ConversationStatus.options, 'interrupted']);
export type ConversationViewStatus = z.infer<typeof ConversationViewStatus>;

/** GET /v1/conversations/:id: the generic view and the fields each agent's kernel view adds. */
/** Whether the agent's model reads a summary of the conversation's older messages instead of them (issue 44). */
export const ContextView = z.object({
  summarized: z.boolean(),
  /** the last message the summary folds: the model reads the messages after it */
  throughMessageId: z.string().optional(),
});

/** GET /v1/conversations/{id}/context-summary: what the model reads of the messages through throughMessageId. */
export const ContextSummaryView = z.object({
  text: z.string(),
  throughMessageId: z.string(),
  /** 1 for the conversation's first summary, one more for each that folds further */
  version: z.number().int().min(1),
  createdAt: z.string(),
});

/** Where a message stands among its siblings (the messages with the same parent: edits, regenerated answers). */
export const SiblingsView = z.object({
  /** its place among them, from 0 */
  index: z.number().int().min(0),
  count: z.number().int().min(2),
  /** the siblings in the order they were written, the message among them: POST .../branch with one makes its branch current */
  ids: z.array(z.string()),
});

/** A message of the current branch: its parent (null for a first message) and, when it has any, its siblings. */
export const BranchMessageView = ChatMessage.extend({ parentId: z.string().nullable(), siblings: SiblingsView.optional() });

/** POST /v1/conversations/{id}/messages/{messageId}/edit: the edited message's new text. */
export const EditBody = z.strictObject({ text: MessageText });
/** POST /v1/conversations/{id}/messages/{messageId}/regenerate: no fields (a body, if sent, is an empty object). */
export const RegenerateBody = z.strictObject({}).optional().default({});
/** POST /v1/conversations/{id}/branch: a message of the branch to make current (any of its messages; its newest becomes the leaf). */
export const BranchBody = z.strictObject({ leafId: z.string().min(1).max(200).refine(isStorableText, UNSTORABLE_MESSAGE) });
/** POST /v1/conversations/{id}/fork: the message the new conversation's transcript ends with. */
export const ForkBody = z.strictObject({ messageId: z.string().min(1).max(200).refine(isStorableText, UNSTORABLE_MESSAGE) });

export const conversationView = (catalog: ServerCatalog) =>
  z.object({
    id: z.uuid(),
    agent: agentEnum(catalog),
    title: z.string(),
    workflowId: z.string(),
    createdAt: z.string(),
    status: ConversationViewStatus,
    /** the current branch, from the first message to the leaf */
    messages: z.array(BranchMessageView),
    /** the transcript above is whole; this says whether the model reads a summary of its older part */
    context: ContextView,
    pending: z.array(PendingItem),
    usage: UsageView,
    /** spending against the budgets (tokens, money), when one is set */
    budget: BudgetView.optional(),
    /** a message sent with `pending: "keep"`: sent as the next turn once the running one ends */
    held: HeldMessage.optional(),
    ...Object.assign({}, ...catalog.servers.map((server) => server.view?.shape ?? {})),
  });

export const conversationSummary = (catalog: ServerCatalog) =>
  createdConversation(catalog).extend({
    title: z.string(),
    createdAt: z.string(),
    /** its newest event or message (its creation when it has none): what the list is ordered by */
    lastActivityAt: z.string(),
    /** with ?q=: the words around the search in the newest of the person's messages that has it (absent: the title has it) */
    match: z.string().optional(),
  });

/**
 * GET /v1/conversations' cursor: where the last page ended (last activity to the microsecond, and id), opaque
 * to the client (base64url). It names only the caller's own row, and the list is read as the caller.
 */
const CursorPosition = z.object({ at: z.iso.datetime({ precision: 6 }), id: z.uuid() });
export const encodeCursor = (position: z.infer<typeof CursorPosition>) =>
  Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
const cursor = z
  .string()
  .max(200)
  .transform((text, ctx) => {
    try {
      const [at, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
      return CursorPosition.parse({ at, id });
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not a cursor this API gave (use nextCursor as it came)' });
      return z.NEVER;
    }
  });

export const ListQuery = z.object({
  cursor: cursor.optional(),
  /** conversations per page */
  limit: z.coerce.number().int().min(1).max(100).default(100),
  /** only conversations whose title or one of the person's own messages contains this (any case, taken as it is) */
  q: z.string().trim().min(1, 'q: at least one character that is not a space').max(100).optional(),
});

export const conversationList = (catalog: ServerCatalog) =>
  z.object({
    conversations: z.array(conversationSummary(catalog)),
    /** the next page's cursor (?cursor=), or null on the last page */
    nextCursor: z.string().nullable(),
  });

export const ErrorBody = z.object({
  error: z.string(),
  /** on a 5xx: the X-Request-Id under which the failure was logged */
  requestId: z.string().optional(),
  fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

export { TurnResult };
