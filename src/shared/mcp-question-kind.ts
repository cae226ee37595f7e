// The pending kind `question`: an MCP server asks the user for input in the middle of a call (elicitation).
// The item carries the server's message (`prompt`) and the JSON Schema of the answer (`details.schema`).
// `accept` with `args` answers (checked against the schema: 422 when it does not fit), `decline` refuses,
// `cancel` dismisses; the deadline answers `cancel`, as the protocol says for a request left unanswered.
// A chat message sent instead declines, and says why.
import { describeIssues } from './tool-spec.ts';
import type { DecisionInput, JsonObject, PendingItem } from './messages.ts';
import { jsonSchemaArgs } from './json-schema.ts';

export const QUESTION_DECISIONS = ['accept', 'decline', 'cancel'] as const;

// A row of the runtime's pending kinds (src/shared/pending-kinds.ts checks its shape where it is listed).
export const questionSpec = {
  scope: 'turn' as const,
  messageIsAnswer: false,
  fromMessage: (item: PendingItem, text: string): DecisionInput => ({ pendingId: item.id, decision: 'decline', reason: text }),
  check(item: PendingItem, decision: DecisionInput): string | undefined {
    if (decision.decision !== 'accept') return undefined;
    if (!decision.args) return 'An answer needs "args": the content the server asked for.';
    const schema = (item.details?.schema ?? { type: 'object' }) as JsonObject;
    const checked = jsonSchemaArgs(schema).safeParse(decision.args);
    return checked.success ? undefined : `The answer does not fit what the server asked for: ${describeIssues(checked.error)}`;
  },
};
