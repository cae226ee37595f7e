// The pending kind `question`: an MCP server asks the user for input in the middle of a call (elicitation).
// The item carries the server's message (`prompt`) and the JSON Schema of the answer (`details.schema`).
// `accept` with `args` answers: the schema's defaults fill what the answer leaves out (elicitation-answer.ts),
// and the whole is checked against the schema (422 naming each field when it does not fit); `decline`
// refuses, `cancel` dismisses; the deadline answers `cancel`, as the protocol says for a request left
// unanswered. A chat message sent instead declines, and says why.
import { answerWithDefaults, formatIssues } from './elicitation-answer.ts';
import type { FieldIssue, Refusal } from './refusal.ts';
import type { DecisionInput, JsonObject, PendingItem } from './messages.ts';
import { jsonSchemaArgs } from './json-schema.ts';

export const QUESTION_DECISIONS = ['accept', 'decline', 'cancel'] as const;

const schemaOf = (item: PendingItem) => (item.details?.schema ?? { type: 'object' }) as JsonObject;

/** What an accepted answer sends to the server: the person's answer with the schema's defaults. */
export const questionAnswer = (item: PendingItem, decision: DecisionInput): JsonObject =>
  answerWithDefaults(schemaOf(item), decision.args ?? {});

// A row of the runtime's pending kinds (src/shared/pending-kinds.ts checks its shape where it is listed).
export const questionSpec = {
  scope: 'turn' as const,
  messageIsAnswer: false,
  fromMessage: (item: PendingItem, text: string): DecisionInput => ({ pendingId: item.id, decision: 'decline', reason: text }),
  check(item: PendingItem, decision: DecisionInput): Refusal | undefined {
    if (decision.decision !== 'accept') return undefined;
    if (!decision.args) return 'An answer needs "args": the content the server asked for.';
    const schema = schemaOf(item);
    const answer = questionAnswer(item, decision);
    const checked = jsonSchemaArgs(schema).safeParse(answer);
    const fields: FieldIssue[] = checked.success
      ? []
      : checked.error.issues.map((issue) => ({ field: issue.path.length ? issue.path.join('.') : '(answer)', message: issue.message }));
    fields.push(...formatIssues(schema, answer).filter((issue) => !fields.some((field) => field.field === issue.field)));
    if (fields.length === 0) return undefined;
    const said = fields.map((field) => `${field.field}: ${field.message}`).join('; ');
    return { message: `The answer does not fit what the server asked for: ${said}`, fields };
  },
};
