// Shapes that cross the workflow boundary: the API, the workflow and the activities all import these,
// so a field is declared once and its type is inferred, never written twice.
import { z } from 'zod';
import { isStorableText, SafeJsonObject, UNSTORABLE_MESSAGE } from './safe-text.ts';

/**
 * An agent's name. This module names no agent: which names exist is the catalog's (src/shared/agent-catalog.ts),
 * built at each process's composition root; the API checks a name against it, the workflow only gets known ones.
 */
export const AgentName = z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'must be an agent name');
export type AgentName = z.infer<typeof AgentName>;

export const JsonObject = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObject>;

export const ToolCall = z.object({ id: z.string(), name: z.string(), args: JsonObject });
export type ToolCall = z.infer<typeof ToolCall>;

export const ChatMessage = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant', 'tool']),
  text: z.string(),
  /** assistant: the calls it asked for, in order */
  toolCalls: z.array(ToolCall).optional(),
  /** tool: which call this answers */
  callId: z.string().optional(),
  tool: z.string().optional(),
  args: JsonObject.optional(),
  result: z.unknown().optional(),
  /** generative UI a client renders beside the text, each with a `type` (`recipe_card`, `breweries`, ...) */
  cards: z.array(JsonObject).optional(),
  /** assistant: the structured answer of an agent that answers in JSON (sous), already validated */
  structured: z.unknown().optional(),
  /** assistant: the reply was cut short by Stop; `text` is what streamed before it */
  stopped: z.boolean().optional(),
  /**
   * this copy was shortened to cross Temporal within its limits (an Update's response, src/shared/payload-bounds.ts):
   * the whole message is in the transcript (GET /v1/conversations/{id}); never set on a stored message
   */
  elided: z.boolean().optional(),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/**
 * A PendingItem's kind: the runtime's (src/shared/pending-kinds.ts) or one an agent declares in its spec
 * (AgentSpec.pendingKinds). The wire names none of the agents': the catalog knows them and checks them.
 */
export const PendingKind = z.string().regex(/^[a-z][a-z0-9_.-]{0,39}$/, 'must be a pending kind');
export type PendingKind = z.infer<typeof PendingKind>;

export const DECISIONS = ['approve', 'reject', 'edit', 'yes', 'no', 'accept', 'decline', 'cancel'] as const;
export const DecisionName = z.enum(DECISIONS);
export type DecisionName = z.infer<typeof DecisionName>;

/** What a confirmation offers; a `yes` names one by `id` or `name`. */
export const PendingOption = z.object({ id: z.string(), name: z.string() }).catchall(z.unknown());
export type PendingOption = z.infer<typeof PendingOption>;

export const PendingItem = z.object({
  id: z.string(),
  kind: PendingKind,
  /** the tool (or child workflow's tool) the item belongs to */
  tool: z.string(),
  callId: z.string(),
  args: JsonObject,
  decisions: z.array(DecisionName),
  /** ISO time after which the item's timeout rule applies; absent when it waits forever */
  expiresAt: z.string().optional(),
  /** what to ask the person, for a client to show */
  prompt: z.string().optional(),
  /** confirmation: what `choice` may name */
  options: z.array(PendingOption).optional(),
  /** kind-specific detail a client renders (a patchset's review) */
  details: JsonObject.optional(),
  /**
   * approval: what the call would touch, as its tool's own read-only lookup found it just before the item
   * opened (support's cancel_order: the order; update_user_contact: the current contact details), so a person
   * decides on the thing and not on an id. Bounded (APPROVAL_PREVIEW_MAX_BYTES); absent when the tool has no
   * lookup or it found nothing.
   */
  preview: JsonObject.describe(
    'approval: what the call would touch, looked up read-only as the item opened (support: the order a cancel cancels, the contact details an update replaces); at most 4 KiB',
  ).optional(),
});
export type PendingItem = z.infer<typeof PendingItem>;

export const SendMessageInput = z.object({
  text: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(20_000, 'must be at most 20000 characters')
    .refine(isStorableText, UNSTORABLE_MESSAGE),
  /**
   * What the message does while an item of the turn waits for a person: `decline` makes it the reason that
   * declines every one of them (and the reply's calls that would ask next), `keep` holds it and sends it as
   * the next turn once this one ends. Without it such a message is refused (409), so nothing is decided by
   * accident.
   */
  pending: z.enum(['decline', 'keep']).optional(),
});
export type SendMessageInput = z.infer<typeof SendMessageInput>;

/** An item (or a call that would have asked next) that a message sent with `pending: "decline"` declined. */
export const DeclinedItem = z.object({
  kind: z.string(),
  tool: z.string(),
  callId: z.string(),
  /** the item's id; absent for a call of the same reply that was declined before it opened an item */
  pendingId: z.string().optional(),
});
export type DeclinedItem = z.infer<typeof DeclinedItem>;

/** A message sent with `pending: "keep"`: held by the conversation, sent as the next turn once this one ends. */
export const HeldMessage = z.object({ id: z.string(), text: z.string() });
export type HeldMessage = z.infer<typeof HeldMessage>;

/**
 * A turn that starts from another point of the conversation's tree (issue 45): an edit (a new user message whose
 * parent is `at`, null for the root) or a regenerate (the turn runs again from the user message `at`, its answer a
 * sibling of the one it replaces). The API checks `at` against the conversation before it asks.
 */
export const BranchTurnInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('edit'), at: z.string().min(1).nullable(), text: SendMessageInput.shape.text }),
  z.object({ kind: z.literal('regenerate'), at: z.string().min(1) }),
]);
export type BranchTurnInput = z.infer<typeof BranchTurnInput>;

/** A branch becomes current: the one through `messageId`, at its newest message. */
export const SwitchBranchInput = z.object({ messageId: z.string().min(1) });
export type SwitchBranchInput = z.infer<typeof SwitchBranchInput>;

export const DecisionInput = z.object({
  // pending ids are UUIDs; the bound keeps an error that repeats one short
  pendingId: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').refine(isStorableText, UNSTORABLE_MESSAGE),
  decision: DecisionName,
  args: SafeJsonObject.optional(),
  reason: z.string().max(2000).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
  choice: z.string().max(500).refine(isStorableText, UNSTORABLE_MESSAGE).optional(),
});
export type DecisionInput = z.infer<typeof DecisionInput>;

export const TurnResult = z.object({
  messages: z.array(ChatMessage),
  pending: z.array(PendingItem),
  /** the turn ended because someone pressed Stop (POST /stop or the stop signal) */
  stopped: z.boolean().optional(),
  /** `pending: "decline"`: what the message declined, in order */
  declined: z.array(DeclinedItem).optional(),
  /** `pending: "keep"`: the message held until the turn ends */
  held: HeldMessage.optional(),
});
export type TurnResult = z.infer<typeof TurnResult>;

export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  calls: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof Usage>;

export const ConversationStatus = z.enum(['idle', 'running', 'waiting']);
export type ConversationStatus = z.infer<typeof ConversationStatus>;

export const ConversationState = z.object({
  status: ConversationStatus,
  pending: z.array(PendingItem),
  turns: z.number().int(),
  usage: Usage,
  rejectedSignals: z.number().int(),
  /** what a stateful agent (sous) shows of its state: its kernel's view */
  agentState: JsonObject.optional(),
  /** approved budget items so far: each raised the conversation's token budget by one budget's worth */
  budgetRaises: z.number().int().optional(),
  /** a message sent with `pending: "keep"`, waiting for the turn to end */
  held: HeldMessage.optional(),
});
export type ConversationState = z.infer<typeof ConversationState>;

/** What a closed item became, so a late decision gets "not pending any more (…)" rather than "unknown". */
export const ClosedReason = z.enum(['decided', 'expired', 'superseded', 'withdrawn']);
export type ClosedReason = z.infer<typeof ClosedReason>;

/** Settings fixed when a conversation starts and carried across continue-as-new. */
export const SessionSettings = z.object({
  maxSteps: z.number().int().positive(),
  maxToolErrors: z.number().int().positive(),
  approvalTimeoutMs: z.number().int().positive(),
  continueAsNewAfterTurns: z.number().int().min(0),
  modelTimeoutMs: z.number().int().positive(),
  modelMaxAttempts: z.number().int().positive(),
  /** the model step runs tools that need no person itself (absent: yes); false gives each its own local activity */
  inlineTools: z.boolean().optional(),
  /** agent-specific durations (e.g. the beer agent's confirmation timeout), read by its child workflows */
  agent: z.record(z.string(), z.number()).optional(),
});
export type SessionSettings = z.infer<typeof SessionSettings>;

export const ChatSessionInput = z.object({
  conversationId: z.string(),
  userId: z.string(),
  agent: AgentName,
  title: z.string(),
  /** the title is the default one: after the first exchange a task model makes one (absent on older runs) */
  autoTitle: z.boolean().optional(),
  client: z.string().optional(),
  settings: SessionSettings,
  /** the MCP servers whose tools the agent may use (BRIGADE_MCP_CONFIG when the conversation started) */
  mcpServers: z.array(z.string()).optional(),
  /** a stateful agent's starting point (sous: recipe and defaults), given to its kernel's init */
  init: JsonObject.optional(),
  /** set by continue-as-new: what the previous run had counted */
  carried: z
    .object({
      turns: z.number().int(),
      usage: Usage,
      rejectedSignals: z.number().int(),
      /** recently closed pending items, so a late decision is still told "not pending any more" */
      closed: z.array(z.tuple([z.string(), ClosedReason])).optional(),
      /** a stateful agent's state and its open conversation-scoped items */
      agentState: z.unknown().optional(),
      openItems: z.array(PendingItem).optional(),
      /** how many budget items were approved: each raises the conversation's budget by one budget's worth */
      budgetRaises: z.number().int().nonnegative().optional(),
    })
    .optional(),
});
export type ChatSessionInput = z.infer<typeof ChatSessionInput>;

/**
 * The runtime's event types, rows of the append-only events table (`key` makes a retried write a no-op).
 * Agents declare their own in their spec (AgentSpec.events, with their data's schema); the catalog checks
 * that none is taken twice.
 */
export const RUNTIME_EVENT_TYPES = [
  'message',
  'message.delta',
  'tool.call',
  'tool.result',
  'pending.opened',
  'pending.closed',
  'progress',
  'usage',
  'turn.started',
  'turn.ended',
  /** Stop ended the turn: { turn, messageId? (the cut reply) } */
  'turn.stopped',
  'signal.rejected',
  /** the conversation's title changed (a rename, or the title made from the first exchange): { title } */
  'title.changed',
  /** a message too large for the model's context on its own: the model read only its beginning. { messageId } */
  'context.cut',
  /** the current branch changed (an edit, a regenerate, a switch): { leafId, reason: 'edit' | 'regenerate' | 'switch' } */
  'branch.changed',
  /** a fork's first event: the conversation and message it was copied from. { conversationId, messageId } */
  'conversation.forked',
  /** a stateful agent's state after an answer, what a branch or a fork resumes from: { messageId, state } */
  'agent.state',
] as const;
export const EventType = z.string().regex(/^[a-z][a-z0-9_.-]{0,63}$/, 'must be an event type');
export type EventType = z.infer<typeof EventType>;

export const NewEvent = z.object({ key: z.string(), type: EventType, data: JsonObject });
export type NewEvent = z.infer<typeof NewEvent>;

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 });
