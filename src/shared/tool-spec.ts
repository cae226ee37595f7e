// A tool as both sides see it: the schema is the one source for the model's declaration,
// the argument validator and the argument type. Implementations live in src/tools (activity side).
import { z } from 'zod';
import type { DecisionName } from './messages.ts';

export const TimeoutAction = z.enum(['reject', 'approve']);
export type TimeoutAction = z.infer<typeof TimeoutAction>;

export interface ToolPolicy {
  /** whether a human must decide before the tool runs */
  approval: boolean;
  decisions: DecisionName[];
  /** overrides the session's approval timeout */
  deadlineMs?: number;
  onTimeout: TimeoutAction;
}

export interface ToolSpec<Args extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  args: Args;
  policy: ToolPolicy;
}

export const AUTO: ToolPolicy = { approval: false, decisions: [], onTimeout: 'reject' };
export const NEEDS_APPROVAL: ToolPolicy = {
  approval: true,
  decisions: ['approve', 'reject', 'edit'],
  onTimeout: 'reject',
};

export const defineTool = <Args extends z.ZodType>(spec: ToolSpec<Args>): ToolSpec<Args> => spec;

/** zod's issues as one line a model (or a person) can act on. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
}
