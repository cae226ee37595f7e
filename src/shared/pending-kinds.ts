// What each kind of pending item means to the runtime, as data: whether it belongs to the turn that opened
// it, how a chat message answers it, and what a "yes" must name. chatSession reads this table (the catalog
// adds the rows of the kinds agents bring, such as sous's patchset); a new kind is a new row, not a branch.
import type { DecisionInput, PendingItem, PendingOption } from './messages.ts';
import type { Refusal } from './refusal.ts';
import { questionSpec } from './mcp-question-kind.ts';

export interface PendingKindSpec {
  /**
   * `turn`: the turn waits on it and it closes when the turn ends (approvals, confirmations).
   * `conversation`: it outlives the turn that made it and is decided between turns (a PatchSet).
   */
  scope: 'turn' | 'conversation';
  /** whether a message that answers the item is an answer (closed as decided) or a refusal (superseded) */
  messageIsAnswer: boolean;
  /** how a chat message sent while the item is open answers it; undefined leaves it open */
  fromMessage(item: PendingItem, text: string): DecisionInput | undefined;
  /**
   * whether a message sent without `pending` reads as an answer to the item (beer's "yes, Stone Brewing", its
   * contract's way to answer); any other message while the item is open is refused until it says what to do
   */
  answeredBy?(item: PendingItem, text: string): boolean;
  /**
   * what the decision needs besides being one of the item's `decisions`: a message, or one with the fields it
   * names (the API's 422 lists them), or undefined when fine
   */
  check?(item: PendingItem, decision: DecisionInput): Refusal | undefined;
}

const YES = /^\s*(?:y|yes|yeah|yep|sure|ok(?:ay)?|please|sim|of course)\b/i;
const NO = /^\s*(?:n|no|nope|nah|não|nao|no thanks)\b/i;

/** The option a text names: by id, or by name (case and punctuation aside), the longest name first. */
export function findOption(options: readonly PendingOption[], text: string): PendingOption | undefined {
  const norm = (value: string) =>
    value
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  const said = ` ${norm(text)} `;
  const byId = options.find((option) => option.id === text.trim());
  if (byId) return byId;
  return [...options]
    .sort((a, b) => b.name.length - a.name.length)
    .find((option) => norm(option.name) && said.includes(` ${norm(option.name)} `));
}

/** The runtime's own kinds; the catalog adds the agents' (AgentCatalog.pendingKind). */
export const RUNTIME_PENDING_KINDS: Readonly<Record<string, PendingKindSpec>> = {
  approval: {
    scope: 'turn',
    messageIsAnswer: false,
    // A message instead of a decision is a refusal, and the message says why.
    fromMessage: (item, text) => ({ pendingId: item.id, decision: 'reject', reason: text }),
  },
  confirmation: {
    scope: 'turn',
    messageIsAnswer: true,
    fromMessage(item, text) {
      const options = item.options ?? [];
      if (NO.test(text)) return { pendingId: item.id, decision: 'no', reason: text };
      const named = findOption(options, text);
      if (named) return { pendingId: item.id, decision: 'yes', choice: named.id };
      // "yes" alone picks the only option, or the first one offered.
      if (YES.test(text)) return { pendingId: item.id, decision: 'yes', ...(options[0] ? { choice: options[0].id } : {}) };
      return { pendingId: item.id, decision: 'no', reason: text };
    },
    answeredBy: (item, text) => NO.test(text) || YES.test(text) || findOption(item.options ?? [], text) !== undefined,
    check(item, decision) {
      const options = item.options ?? [];
      if (decision.decision !== 'yes' || options.length === 0) return undefined;
      if (decision.choice === undefined && options.length === 1) return undefined;
      if (decision.choice !== undefined && findOption(options, decision.choice)) return undefined;
      const names = options.map((option) => `${option.id} (${option.name})`).join(', ');
      return `"choice" must name one of the options: ${names}.`;
    },
  },
  // The turn is over a token budget: approve lets it go on, a message instead is a refusal.
  budget: {
    scope: 'turn',
    messageIsAnswer: false,
    fromMessage: (item, text) => ({ pendingId: item.id, decision: 'reject', reason: text }),
  },
  // MCP elicitation: a server's question in the middle of a call (src/shared/mcp-question-kind.ts)
  question: questionSpec,
};

/** The option id a valid `yes` chose (by id or name), for the item's owner. */
export function chosenOption(item: PendingItem, decision: DecisionInput): PendingOption | undefined {
  const options = item.options ?? [];
  if (decision.decision !== 'yes') return undefined;
  if (decision.choice === undefined) return options.length === 1 ? options[0] : undefined;
  return findOption(options, decision.choice);
}
