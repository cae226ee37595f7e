// The eval's vocabulary: a case is data (who opens the conversation, what the person says or decides, turn by
// turn, and what must happen), graded from what the real turn engine did. Scripted model answers (right and
// wrong) are data too, in one form for every wire: Gemini, OpenAI-compatible and Anthropic.
import type { AgentName, JsonObject } from '../../src/shared/messages.ts';

/** An argument's expected value: equal, or matching a pattern (strings and numbers are compared as text). */
export type ArgMatch = string | number | boolean | null | RegExp;

export interface CallMatch {
  name: string;
  /** each listed argument must match; others may be anything */
  args?: Record<string, ArgMatch>;
}

export interface Expect {
  /** each must be called in this turn (in any order) */
  calls?: CallMatch[];
  /** none of these may be called (with args: only calls whose arguments match are forbidden) */
  forbid?: CallMatch[];
  /** no tool at all this turn */
  noTools?: boolean;
  /** an item the turn must leave waiting for the person, or 'none' */
  pending?: { kind: 'approval' | 'confirmation' | 'patchset' | 'question'; tool?: string } | 'none';
  /** the turn's reply (all its assistant text) must match each */
  says?: RegExp[];
  /** and must match none of these */
  mustNotSay?: RegExp[];
  /** a tool result of this turn must match (e.g. { tool: 'execute_recipe_sql', status: 'success' }) */
  result?: { tool: string; match: Record<string, ArgMatch> };
  /** a rubric for the model-graded check of the free text (run with a key and EVAL_JUDGE=1, or a test's judge) */
  judge?: string;
}

export type Step =
  | { say: string; expect?: Expect }
  /** a decision on the item the previous turn left waiting; `choice: 'first'` names its first option */
  | { decide: 'approve' | 'reject' | 'yes' | 'no' | 'accept' | 'decline'; choice?: 'first'; reason?: string; expect?: Expect };

export interface EvalCase {
  agent: AgentName;
  name: string;
  /** what is measured, for the scorecard's rows: lookup, cancel, refusal, save, guarded-sql, patchset, ... */
  behaviour: string;
  /** the conversation's creation body beyond `agent` (a beer client, sous defaults) and whose token opens it */
  open?: { body?: JsonObject; as?: 'alice' | 'gus' };
  /** turns in order; a turn without `expect` is the conversation so far */
  steps: Step[];
}

/** One model answer, in the form every wire is made from. */
export type EvalReply =
  | { text: string }
  | { calls: { name: string; args: JsonObject }[]; text?: string }
  /** a structured answer (sous): JSON text on Gemini and OpenAI, the forced answer tool on Anthropic */
  | { answer: JsonObject };

export interface ScriptedRun {
  case: string;
  label: string;
  /** the chat model's answers, one per streamed model request, in order */
  replies: EvalReply[];
  grade: 'pass' | 'fail';
  /** a wrong run's grade must name this */
  because?: RegExp;
}

export interface StepTrace {
  step: number;
  calls: { name: string; args: JsonObject }[];
  results: { tool: string; result: unknown }[];
  pending: { kind: string; tool: string }[];
  text: string;
  status: number;
}

export interface CaseResult {
  agent: AgentName;
  name: string;
  behaviour: string;
  pass: boolean;
  /** the first problem, or the last reply */
  detail: string;
  problems: string[];
  trace: StepTrace[];
  usage: { inputTokens: number; outputTokens: number; calls: number };
  model: string;
  cost?: { amount: number; currency: string };
}
