// Tool calls and results in a person's words: the agent's home words its own tools (agentHome.ts `tools`),
// and any other tool gets a generic sentence built from its name and arguments. Raw JSON is never the words.
import type { ReactNode } from 'react';
import { toolWordsFor } from './agents/registry';
import { listCount, plural } from './plural';

type Args = Record<string, unknown>;

/** "cancel_order" → "Cancel order" */
export function humanName(name: string): string {
  const words = name
    .replace(/_tool$/, '')
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : name;
}

/** A value as a person reads it: text as is, lists joined, objects counted. */
export function plainValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)';
  if (typeof value === 'string') return value.length > 80 ? `${value.slice(0, 79)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value))
    return value.every((v) => typeof v !== 'object' || v === null)
      ? value.map(plainValue).join(', ') || '(none)'
      : plural(value.length, 'item');
  return plural(Object.keys(value as object).length, 'detail');
}

/** "order id 13579, phone 555-123-4567" */
export function argsText(args: Args): string {
  return Object.entries(args)
    .map(([k, v]) => `${humanName(k).toLowerCase()} ${plainValue(v)}`)
    .join(', ');
}

export function callSentence(agent: string, tool: string, args: Args): string {
  const words = toolWordsFor(agent, tool)?.call;
  if (words) return words(args);
  const text = argsText(args);
  return text ? `${humanName(tool)}: ${text}` : humanName(tool);
}

/** What an approval of the call touches, laid out by the tool's agent (ToolWords.approval); undefined: none. */
export function approvalView(agent: string, tool: string, args: Args, preview: Args | undefined): ReactNode | undefined {
  return toolWordsFor(agent, tool)?.approval?.(args, preview);
}

/** The same in a few words, for the record of the decision (ToolWords.approved); undefined: none. */
export function approvedWords(agent: string, tool: string, args: Args, preview: Args | undefined): string | undefined {
  return toolWordsFor(agent, tool)?.approved?.(args, preview);
}

/** The arguments a person changed before approving: [field, old, new]. */
export function changedArgs(before: Args | undefined, after: Args | undefined): [string, string, string][] {
  if (!before || !after) return [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => [humanName(k).toLowerCase(), plainValue(before[k]), plainValue(after[k])]);
}

export type ResultKind = 'ok' | 'declined' | 'failed' | 'stopped';

export function resultKind(result: unknown): ResultKind {
  if (typeof result !== 'object' || result === null || !('error' in result)) return 'ok';
  const status = (result as Args).status;
  return status === 'rejected' ? 'declined' : status === 'stopped' ? 'stopped' : 'failed';
}

/** A call that Stop left unanswered: calm, in the person's own terms (the server's text is for the model). */
export function stoppedSentence(result: unknown): string {
  const error = String((result as Args | null)?.error ?? '');
  // a call left behind by an edit, a regenerate or a version switch: nobody pressed Stop
  if (/another branch/.test(error)) return 'Not done: you moved to another version of the conversation before it ran.';
  const running = /finishes on its own/.test(error);
  return running
    ? 'You stopped this answer. What had already started finishes on its own, but is not added here.'
    : 'You stopped this answer before this was done.';
}

/** The reason a person gave when declining, from the result the agent reads. */
export function declineReason(result: unknown): string | undefined {
  const error = String((result as Args | null)?.error ?? '');
  const match =
    /^The user rejected this call: (.*)$/s.exec(error) ??
    /^Not run: the user answered with a message instead of approving: "(.*)"$/s.exec(error);
  const why = match?.[1]?.trim();
  return why && why !== 'no reason given' ? why : undefined;
}

/** An error as a sentence: codes, JSON and retry counts left out. */
export function plainError(error: unknown): string {
  let text = typeof error === 'string' ? error : error instanceof Error ? error.message : plainValue(error);
  text = text
    .replace(/\s*\(after \d+ attempts?\)/gi, '')
    .replace(/\b([A-Z][A-Za-z]+) unreachable: (ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ECONNRESET)\b[^.]*/g, '$1 could not be reached')
    .replace(/\b(ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ECONNRESET)\b/g, 'could not be reached')
    .replace(/Invalid input: expected (\w+), received undefined/g, 'this is required')
    .replace(/Invalid input: expected (\w+), received (\w+)/g, 'this should be a $1, not a $2')
    .trim();
  if (!text) return 'Something went wrong.';
  text = text[0]!.toUpperCase() + text.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** What a tool's result says, in a sentence. */
export function resultSentence(agent: string, tool: string, result: unknown, args: Args): string {
  const kind = resultKind(result);
  const what = callSentence(agent, tool, args);
  const lower = what[0]!.toLowerCase() + what.slice(1);
  if (kind === 'declined') {
    const why = declineReason(result);
    return `You declined: ${lower}${why ? ` (${why})` : ''}.`;
  }
  if (kind === 'failed') return `Could not ${lower}: ${plainError((result as Args).error)}`;
  const words = toolWordsFor(agent, tool)?.result;
  const own = typeof result === 'object' && result !== null && words ? words(result, args) : undefined;
  if (own) return own;
  return `Done: ${lower}.${summary(result)}`;
}

/** The agent's own view of a result that is not an error; undefined when its home declares none. */
export function resultView(agent: string, tool: string, result: unknown, args: Args): ReactNode | undefined {
  const view = toolWordsFor(agent, tool)?.view;
  if (!view || resultKind(result) !== 'ok' || result === null || result === undefined) return undefined;
  return view(result, args);
}

/** A few plain facts from a result the agent's home does not word. */
function summary(result: unknown): string {
  if (Array.isArray(result)) return ` Found ${plural(result.length, 'result')}.`;
  if (typeof result !== 'object' || result === null) return result === undefined ? '' : ` ${plainValue(result)}.`;
  const entries = Object.entries(result as Args);
  // a list counts as what its field names ("orders"), not as "results"
  for (const [k, v] of entries) if (Array.isArray(v)) return ` ${listCount(v.length, humanName(k).toLowerCase())}.`;
  const scalars = entries
    .filter(([k, v]) => (typeof v === 'string' || typeof v === 'number') && !/(^|_)id$|Id$|_at$|At$/.test(k) && String(v).length < 60)
    .slice(0, 3);
  return scalars.length ? ` ${scalars.map(([k, v]) => `${humanName(k)}: ${v}`).join(' · ')}.` : '';
}
