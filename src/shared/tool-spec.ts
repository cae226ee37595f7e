// A tool as both sides see it: the schema is the one source for the model's declaration,
// the argument validator and the argument type. Implementations live in the agent's home (activity side),
// typed from the spec (ToolImplementations in src/activities/tool-context.ts).
import { z } from 'zod';
import type { DecisionName, JsonObject } from './messages.ts';

export const TimeoutAction = z.enum(['reject', 'approve']);
export type TimeoutAction = z.infer<typeof TimeoutAction>;

/**
 * Whether a human must decide before a call of the tool runs: always, never, or as a predicate of the call's
 * checked arguments (as openai-agents-js's `needsApproval`: a refund above some amount, a delete outside the
 * person's own folder). The predicate runs in the workflow, where it is replayed, and in the model step, which
 * runs by itself only the calls that need no person: it must be deterministic and free of side effects (the
 * tool's own code over its arguments; no I/O, no clock, no randomness). One that throws asks a person.
 */
export type ApprovalRule = boolean | ((args: JsonObject) => boolean);

export interface ToolPolicy {
  approval: ApprovalRule;
  decisions: DecisionName[];
  /** overrides the session's approval timeout */
  deadlineMs?: number;
  onTimeout: TimeoutAction;
  /**
   * The argument fields an `edit` decision may change (absent: any). An approval is bound to the arguments it
   * was asked for: an edit that changes another field is refused (422), it would be a call nobody was asked about.
   */
  editable?: readonly string[];
}

/** Whether this call (its arguments checked against the tool's schema) needs a person's approval. */
export function needsApproval(policy: ToolPolicy, args: JsonObject): boolean {
  const { approval } = policy;
  if (typeof approval !== 'function') return approval;
  try {
    return approval(args) !== false;
  } catch {
    return true;
  }
}

/** Whether some call of the tool may need approval (a listing of the agent's tools says so). */
export const mayNeedApproval = (policy: ToolPolicy): boolean => policy.approval !== false;

/**
 * Where a tool runs. `activity` (the default): the runTool local activity, exactly once by call id.
 * `child`: a child workflow named `workflow`, with the readable ID `<idPrefix>-<id>`, where `id` is made by
 * the conversation and handed to the child (so its effects can be keyed on it); it gets a ChildToolInput
 * and returns a ChildToolOutput. Use it for multi-step work with progress, or work that waits on a person.
 */
export type ToolRunner = { kind: 'activity' } | ChildRunner;
export type ChildRunner = { kind: 'child'; workflow: string; idPrefix: string };

export interface ToolSpec<Args extends z.ZodType = z.ZodType, Name extends string = string> {
  name: Name;
  description: string;
  args: Args;
  policy: ToolPolicy;
  runner?: ToolRunner;
  /** shown with the tool's approval items (an MCP tool's server) */
  details?: JsonObject;
  /**
   * its results carry `sources` (links) that the web client may show as links; any other tool's `sources`
   * are shown as text, so a tool's result (an MCP server's above all) cannot plant links on the page
   */
  sources?: boolean;
}

export const AUTO: ToolPolicy = { approval: false, decisions: [], onTimeout: 'reject' };
export const NEEDS_APPROVAL: ToolPolicy = {
  approval: true,
  decisions: ['approve', 'reject', 'edit'],
  onTimeout: 'reject',
};

/** A tool the runTool activity runs: the agent's home must give it an implementation of its arguments' type. */
export type ActivityTool<Args extends z.ZodType = z.ZodType, Name extends string = string> = ToolSpec<Args, Name> & {
  runner?: { kind: 'activity' };
};
/** A tool run by a child workflow: no implementation, the workflow named by its runner does the work. */
export type ChildTool<Args extends z.ZodType = z.ZodType, Name extends string = string> = ToolSpec<Args, Name> & { runner: ChildRunner };

// The name's literal type is kept, so an agent's implementations can be checked against its tool list.
export const defineTool = <Args extends z.ZodType, const Name extends string>(spec: ActivityTool<Args, Name>): ActivityTool<Args, Name> =>
  spec;
export const defineChildTool = <Args extends z.ZodType, const Name extends string>(spec: ChildTool<Args, Name>): ChildTool<Args, Name> =>
  spec;

/** zod's issues as one line a model (or a person) can act on. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`).join('; ');
}
