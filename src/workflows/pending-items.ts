// The conversation's pending items: what waits for a person, from open to closed. An item is opened (an
// event), decided (by the decide update or the decision signal), answered by a chat message instead
// (superseded, or decided when its kind says a message is an answer), expired at its deadline, or closed
// with its turn. What each kind means is data (the catalog's PendingKindSpec rows, given as kindOf); this
// module only keeps the books. Pure: the kinds, the search attribute, the event sink and the clock are given,
// so it is tested without Temporal.
import type { OpenPendingRequest } from '../shared/child-tool.ts';
import type { ChatMessage, ClosedReason, DecisionInput, DecisionName, JsonObject, NewEvent, PendingItem } from '../shared/messages.ts';
import { sameJson } from '../shared/json-equal.ts';
import { DecisionInput as DecisionInputSchema } from '../shared/messages.ts';
import type { PendingKindSpec } from '../shared/pending-kinds.ts';
import { type ToolSpec, describeIssues } from '../shared/tool-spec.ts';
import { fail } from './failure-text.ts';
import { BRANCH_LEFT, type TurnEnd } from './stop.ts';

export interface OpenItem {
  item: PendingItem;
  decision?: DecisionInput;
  /** set when a user message answered the item instead of a decision */
  supersededBy?: string;
}

export interface ItemOutcome {
  decision: DecisionInput;
  timedOut: boolean;
  supersededBy?: string;
  /** Stop withdrew the item: the turn that waited on it has ended */
  withdrawn?: boolean;
}

export interface PendingItemsOptions {
  /** where pending.opened and pending.closed go (the event log) */
  record(event: NewEvent): void;
  /** the BrigadeWaitingForHuman search attribute; called only when its value changes */
  setWaiting(waiting: boolean): void;
  /** what a kind of item means (the catalog's pendingKind); every open item's kind is one it knows */
  kindOf(kind: string): PendingKindSpec | undefined;
  /** a tool's argument schema and policy, for checking a decision against the call it was asked about */
  toolOf(tool: string): Pick<ToolSpec, 'args' | 'policy'> | undefined;
  /** open items and closed reasons carried over continue-as-new */
  carriedOpen?: readonly PendingItem[];
  carriedClosed?: readonly (readonly [string, ClosedReason])[];
  /** the workflow's clock (Date.now is deterministic in a workflow) */
  now?: () => number;
}

/** The item a child workflow asked for (askParent): its request id is the item's id, its deadline starts now. */
export function itemForChild(request: OpenPendingRequest, now: number): PendingItem {
  return {
    id: request.requestId,
    kind: request.kind,
    tool: request.tool,
    callId: request.callId,
    args: request.args,
    decisions: request.decisions,
    expiresAt: new Date(now + request.deadlineMs).toISOString(),
    ...(request.prompt ? { prompt: request.prompt } : {}),
    ...(request.options ? { options: request.options } : {}),
    ...(request.details ? { details: request.details } : {}),
  };
}

/**
 * Refuses (422) an edit that changes an argument the tool's policy does not let an edit change: the approval was
 * asked for the call as it was, and only the fields the policy names may differ from it.
 */
function boundEdit(item: PendingItem, edited: JsonObject, editable: readonly string[] | undefined): void {
  if (!editable) return;
  const keys = new Set([...Object.keys(item.args), ...Object.keys(edited)]);
  const changed = [...keys].filter((key) => !editable.includes(key) && !sameJson(item.args[key], edited[key]));
  if (!changed.length) return;
  const may = editable.length ? `only ${editable.join(', ')}` : 'none of its arguments';
  throw fail(
    'DecisionMismatch',
    `An edit of ${item.tool} may change ${may}; this one changes ${changed.join(', ')}, which the approval was not asked about.`,
    changed.map((field) => ({ field, message: 'may not be changed by an edit' })),
  );
}

/** The decisions that refuse an item, most usual first. */
const REFUSALS: readonly DecisionName[] = ['reject', 'no', 'decline', 'cancel'];

/** The decision with which an item is refused, if it has one. */
export const refusalOf = (item: PendingItem): DecisionName | undefined => REFUSALS.find((name) => item.decisions.includes(name));

/** An open item as a 409 names it, and the sentence that names them all (what the person would decide). */
export function openItemsSentence(items: readonly PendingItem[]): string {
  const named = items.map((item) => `${item.kind === 'approval' ? 'an approval of' : `a ${item.kind} from`} ${item.tool} (${item.id})`);
  const list = named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named.at(-1)}` : named[0];
  return (
    `This turn waits for your decision on ${list}. Send the message with "pending": "decline" to decline ` +
    `${items.length > 1 ? 'them all' : 'it'} with the message as your reason, or "pending": "keep" to send it once the turn ends.`
  );
}

export class PendingItems {
  readonly #open = new Map<string, OpenItem>();
  readonly #closed: Map<string, ClosedReason>;
  #waitingAttribute = false;
  readonly #options: PendingItemsOptions;

  /** the item's kind's row; an item of a kind the catalog does not know is a bug, not a person's error */
  #kind(item: PendingItem): PendingKindSpec {
    const spec = this.#options.kindOf(item.kind);
    if (!spec) throw new Error(`Pending kind "${item.kind}" is in no agent catalog`);
    return spec;
  }

  constructor(options: PendingItemsOptions) {
    this.#options = options;
    for (const item of options.carriedOpen ?? []) this.#open.set(item.id, { item });
    this.#closed = new Map(options.carriedClosed ?? []);
  }

  #now(): number {
    return this.#options.now ? this.#options.now() : Date.now();
  }

  get(id: string): OpenItem | undefined {
    return this.#open.get(id);
  }

  /** open items nobody has decided yet */
  undecided(): OpenItem[] {
    return [...this.#open.values()].filter((entry) => !entry.decision);
  }

  /** what waits for a person, as clients see it */
  items(): PendingItem[] {
    return this.undecided().map((entry) => entry.item);
  }

  /** closed items and what they became, oldest first */
  closedItems(): [string, ClosedReason][] {
    return [...this.#closed];
  }

  /** Opens an item and records it; the caller syncs the waiting flag when it is done changing items. */
  open(item: PendingItem): OpenItem {
    this.#kind(item); // a kind the catalog does not know is refused before anything is recorded
    const entry: OpenItem = { item };
    this.#open.set(item.id, entry);
    this.#options.record({ key: `pending-opened:${item.id}`, type: 'pending.opened', data: item });
    return entry;
  }

  close(entry: OpenItem, reason: ClosedReason, decision: DecisionInput, timedOut = false): void {
    this.#open.delete(entry.item.id);
    this.#closed.set(entry.item.id, reason);
    this.#options.record({
      key: `pending-closed:${entry.item.id}`,
      type: 'pending.closed',
      data: {
        id: entry.item.id,
        kind: entry.item.kind,
        decision: decision.decision,
        reason: decision.reason ?? null,
        ...(decision.choice !== undefined ? { choice: decision.choice } : {}),
        closedAs: reason,
        timedOut,
        supersededBy: entry.supersededBy ?? null,
      },
    });
    this.syncWaiting();
  }

  /** Keeps BrigadeWaitingForHuman true exactly while some item waits for a person. */
  syncWaiting(): void {
    const waiting = this.undecided().length > 0;
    if (waiting === this.#waitingAttribute) return;
    this.#waitingAttribute = waiting;
    this.#options.setWaiting(waiting);
  }

  /**
   * Checks a decision against the open items. Throws the failure the API maps to 400/404/409/422; shared by
   * the update validator and the signal, so both refuse the same things with the same words.
   */
  check(raw: unknown): DecisionInput {
    const parsed = DecisionInputSchema.safeParse(raw);
    if (!parsed.success) throw fail('BadInput', `Invalid decision: ${describeIssues(parsed.error)}`);
    const decision = parsed.data;
    const entry = this.#open.get(decision.pendingId);
    const shortId = decision.pendingId.length > 80 ? `${decision.pendingId.slice(0, 80)}…` : decision.pendingId;
    if (!entry) {
      const reason = this.#closed.get(decision.pendingId);
      if (reason) throw fail('NotPending', `Pending item ${shortId} is not pending any more (${reason}).`);
      throw fail('UnknownPending', `No pending item ${shortId} in this conversation.`);
    }
    if (entry.decision) {
      // Name what really happened: a message that answered the item is not a decision someone else made.
      const what = entry.supersededBy ? 'answered by a chat message sent just before' : 'decided';
      throw fail('NotPending', `Pending item ${shortId} is not pending any more (${what}).`);
    }
    const { item } = entry;
    if (item.expiresAt && Date.parse(item.expiresAt) <= this.#now()) {
      throw fail('NotPending', `Pending item ${shortId} is not pending any more (expired).`);
    }
    if (!item.decisions.includes(decision.decision)) {
      throw fail('DecisionMismatch', `"${decision.decision}" does not fit a ${item.kind}; allowed: ${item.decisions.join(', ')}.`);
    }
    const tool = this.#options.toolOf(item.tool);
    if (decision.decision === 'edit') {
      if (!decision.args) throw fail('DecisionMismatch', 'An edit needs "args": the arguments to run the tool with.');
      const checked = tool?.args.safeParse(decision.args);
      if (!checked?.success) {
        throw fail(
          'DecisionMismatch',
          `Edited arguments do not fit ${item.tool}: ${checked ? describeIssues(checked.error) : 'unknown tool'}`,
          checked?.error.issues.map((issue) => ({ field: issue.path.join('.') || '(arguments)', message: issue.message })),
        );
      }
      boundEdit(item, checked.data as JsonObject, tool!.policy.editable);
    } else if (item.kind === 'approval' && decision.args !== undefined && !sameJson(decision.args, item.args)) {
      // An approval is bound to the arguments it was asked for: a decision that names others is about another call.
      throw fail(
        'Conflict',
        `Pending item ${shortId} asks about ${item.tool} with other arguments than this decision names; nothing was decided. Read the item again, or edit the arguments.`,
      );
    }
    const problem = this.#kind(item).check?.(item, decision);
    if (typeof problem === 'string') throw fail('DecisionMismatch', problem);
    if (problem) throw fail('DecisionMismatch', problem.message, problem.fields);
    return decision;
  }

  /**
   * Records a checked decision. A turn-scoped item stays open for the turn that waits on it, which closes it
   * (settle); any other item is closed here, after `before` ran: it may throw to refuse, and then nothing
   * has changed. Says whether the item was settled here and, if so, what `before` returned.
   */
  decide<T>(decision: DecisionInput, before: (entry: OpenItem) => T): { settled: false } | { settled: true; value: T } {
    const entry = this.#open.get(decision.pendingId)!;
    if (this.#kind(entry.item).scope === 'turn') {
      entry.decision = decision;
      return { settled: false };
    }
    const value = before(entry);
    entry.decision = decision;
    this.close(entry, 'decided', decision);
    return { settled: true, value };
  }

  /**
   * A user message sent while the turn is parked answers each of the turn's items the way its kind says.
   * Returns the items it answered (the turn machine hears of them as an event).
   */
  answerWith(message: ChatMessage): OpenItem[] {
    const answered: OpenItem[] = [];
    for (const entry of this.undecided()) {
      if (this.#kind(entry.item).scope !== 'turn') continue;
      const answer = this.#kind(entry.item).fromMessage(entry.item, message.text);
      if (!answer) continue;
      entry.decision = answer;
      entry.supersededBy = message.id;
      answered.push(entry);
    }
    return answered;
  }

  /**
   * A user message sent with `pending: "decline"`: the reason that refuses every undecided item of the turn,
   * whatever its kind would make of the words (a "yes" typed to beer's question declines it too). The
   * refusal is the first of the item's decisions that refuses. Returns the items it declined.
   */
  declineWith(message: ChatMessage): OpenItem[] {
    const declined: OpenItem[] = [];
    for (const entry of this.undecided()) {
      if (this.#kind(entry.item).scope !== 'turn') continue;
      const refusal = refusalOf(entry.item);
      entry.decision = refusal
        ? { pendingId: entry.item.id, decision: refusal, reason: message.text }
        : this.#kind(entry.item).fromMessage(entry.item, message.text);
      if (!entry.decision) continue;
      entry.supersededBy = message.id;
      declined.push(entry);
    }
    return declined;
  }

  /**
   * Closes an item whose wait ended, as the turn machine's outcome says: decided (or answered by a message: superseded
   * unless its kind takes a message as the answer), or expired with the kind's timeout decision.
   */
  settle(entry: OpenItem, outcome: ItemOutcome): void {
    const { decision, timedOut, supersededBy } = outcome;
    const superseded = supersededBy !== undefined && !this.#kind(entry.item).messageIsAnswer;
    this.close(entry, timedOut ? 'expired' : superseded ? 'superseded' : 'decided', decision, timedOut);
  }

  /** Closes a question nobody answered whose asker gave up (an MCP call that ended): cancelled, as a decision. */
  cancelUnanswered(id: string, reason: string): DecisionInput | undefined {
    const entry = this.#open.get(id);
    if (!entry || entry.decision) return undefined;
    entry.decision = { pendingId: id, decision: 'cancel', reason };
    return entry.decision;
  }

  /**
   * The conversation moved to another branch (issue 45): what the branch left behind still waits on (a stateful
   * agent's proposal) is withdrawn, in words, so that no decision on it applies to the new branch.
   */
  withdrawOpen(reason: string): void {
    for (const entry of [...this.#open.values()]) this.close(entry, 'withdrawn', { pendingId: entry.item.id, decision: 'reject', reason });
  }

  /** Turn-scoped items belong to their turn: when it ends, however it ends, none may stay open. */
  closeTurnItems(withdrawn?: TurnEnd): void {
    for (const entry of [...this.#open.values()]) {
      if (this.#kind(entry.item).scope === 'turn') {
        // a stopped turn's item (a child's, which hears of the Stop after its turn ended) is withdrawn, as Stop says
        if (withdrawn)
          this.close(entry, 'withdrawn', {
            pendingId: entry.item.id,
            decision: 'reject',
            reason: withdrawn === 'branch' ? BRANCH_LEFT : 'the turn was stopped',
          });
        else this.close(entry, 'superseded', { pendingId: entry.item.id, decision: 'reject', reason: 'the turn ended' });
      }
    }
  }
}
