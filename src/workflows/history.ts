// A conversation's history is cut with continue-as-new: each run hands the next one what it counted and
// what a late request must still find (closed items, a stateful agent's state and open items). Here is what
// a run takes over, what it hands on, and when it may go. Pure, so it is tested without Temporal.
import type { AgentKernel } from '../shared/agent-kernel.ts';
import { type ChatSessionInput, type ClosedReason, type PendingItem, type Usage, emptyUsage } from '../shared/messages.ts';

export type Carried = NonNullable<ChatSessionInput['carried']>;

/** how many closed items a run hands to the next one */
export const CLOSED_CARRIED = 100;

/** What a run starts from: the previous run's counters and state, or a new conversation's. */
export function takeOver(input: Pick<ChatSessionInput, 'carried' | 'init'>, kernel: AgentKernel | undefined) {
  const { carried } = input;
  return {
    turns: carried?.turns ?? 0,
    usage: carried?.usage ?? emptyUsage(),
    rejectedSignals: carried?.rejectedSignals ?? 0,
    agentState: carried ? carried.agentState : kernel?.init(input.init),
    openItems: carried?.openItems ?? [],
    closed: carried?.closed ?? [],
    budgetRaises: carried?.budgetRaises ?? 0,
  };
}

export interface RunTotals {
  turns: number;
  usage: Usage;
  rejectedSignals: number;
  /** closed items, oldest first */
  closed: [string, ClosedReason][];
  /** approved budget items (0: none, and nothing is carried) */
  budgetRaises?: number;
  /** only a stateful agent carries its state and open items (a turn's items close with the turn) */
  agent?: { state: unknown; openItems: PendingItem[] };
}

/** What the next run is given. */
export function handOn(totals: RunTotals): Carried {
  return {
    turns: totals.turns,
    usage: totals.usage,
    rejectedSignals: totals.rejectedSignals,
    closed: totals.closed.slice(-CLOSED_CARRIED),
    ...(totals.budgetRaises ? { budgetRaises: totals.budgetRaises } : {}),
    ...(totals.agent ? { agentState: totals.agent.state, openItems: totals.agent.openItems } : {}),
  };
}

export interface ContinueAsNewState {
  turnActive: boolean;
  allHandlersFinished(): boolean;
  /** the server's hint that the history grows long */
  suggested(): boolean;
  turnsThisRun: number;
  /** settings.continueAsNewAfterTurns: 0 leaves it to the server's hint */
  afterTurns: number;
  /** a newer worker deployment version is current than the one this run is pinned to (absent: never) */
  upgradable?(): boolean;
}

/**
 * Continue-as-new only between turns and once every handler has returned, so nothing is cut off. A run pinned
 * to a worker version goes once a newer one is current, so the old version drains as its conversations idle.
 */
export function mayContinueAsNew(s: ContinueAsNewState): boolean {
  return (
    !s.turnActive &&
    s.allHandlersFinished() &&
    (s.suggested() || (s.afterTurns > 0 && s.turnsThisRun >= s.afterTurns) || (s.upgradable?.() ?? false))
  );
}
