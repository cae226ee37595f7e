// The pending kind `question`: an MCP server asks the user for input in the middle of a call (elicitation).
// The item carries the server's message (`prompt`) and the JSON Schema of the answer (`details.schema`).
// `accept` with `args` answers (checked against the schema: 422 when it does not fit), `decline` refuses,
// `cancel` dismisses; the deadline answers `cancel`, as the protocol says for a request left unanswered.
// A chat message sent instead declines, and says why.
import type { PendingKindSpec } from '../shared/pending-kinds.ts';
import { describeIssues } from '../shared/tool-spec.ts';
import type { JsonObject } from '../shared/messages.ts';
import { jsonSchemaArgs } from './json-schema.ts';

export const QUESTION_DECISIONS = ['accept', 'decline', 'cancel'] as const;

export const questionSpec: PendingKindSpec = {
  scope: 'turn',
  messageIsAnswer: false,
  fromMessage: (item, text) => ({ pendingId: item.id, decision: 'decline', reason: text }),
  check(item, decision) {
    if (decision.decision !== 'accept') return undefined;
    if (!decision.args) return 'An answer needs "args": the content the server asked for.';
    const schema = (item.details?.schema ?? { type: 'object' }) as JsonObject;
    const checked = jsonSchemaArgs(schema).safeParse(decision.args);
    return checked.success ? undefined : `The answer does not fit what the server asked for: ${describeIssues(checked.error)}`;
  },
};
