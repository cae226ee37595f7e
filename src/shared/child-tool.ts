// The contract between chatSession and a tool that runs as a child workflow (ToolSpec.runner.kind 'child').
import { z } from 'zod';
import { DecisionInput, DecisionName, JsonObject, PendingKind, PendingOption, SessionSettings } from './messages.ts';

export const ChildToolInput = z.object({
  /** made by the conversation, also the end of the child's workflow ID: key effects on it */
  id: z.string(),
  conversationId: z.string(),
  userId: z.string(),
  client: z.string().optional(),
  /** the parent, for asking it to open a pending item (askParent) */
  parentWorkflowId: z.string(),
  callId: z.string(),
  tool: z.string(),
  args: JsonObject,
  settings: SessionSettings,
});
export type ChildToolInput = z.infer<typeof ChildToolInput>;

export const ChildToolOutput = z.object({
  /** what the model sees: the tool's contract result */
  result: JsonObject,
  /** generative UI for the tool message (a recipe card, brewery cards) */
  cards: z.array(JsonObject).optional(),
});
export type ChildToolOutput = z.infer<typeof ChildToolOutput>;

/**
 * A child asks the conversation to open a pending item for it: the conversation shows it to the person,
 * owns the deadline, and signals the outcome back. The request id becomes the item's id.
 */
export const OpenPendingRequest = z.object({
  requestId: z.string().min(1).max(100),
  /** the child's workflow ID; only a child the conversation started may ask */
  owner: z.string().min(1).max(300),
  kind: PendingKind,
  tool: z.string(),
  callId: z.string(),
  args: JsonObject,
  decisions: z.array(DecisionName).min(1),
  deadlineMs: z.number().int().positive(),
  /** what a timeout decides (a confirmation's timeout counts as "no") */
  onTimeout: DecisionName,
  prompt: z.string().optional(),
  options: z.array(PendingOption).optional(),
  details: JsonObject.optional(),
});
export type OpenPendingRequest = z.infer<typeof OpenPendingRequest>;

export const PendingOutcome = z.object({
  requestId: z.string(),
  decision: DecisionInput,
  timedOut: z.boolean(),
  /** set when the person answered with a chat message instead of a decision */
  supersededBy: z.string().optional(),
  /** Stop ended the turn that waited on it, or the child asked after its turn was stopped */
  withdrawn: z.boolean().optional(),
});
export type PendingOutcome = z.infer<typeof PendingOutcome>;
