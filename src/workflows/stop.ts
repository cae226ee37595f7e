// Stop: what ends a running turn at once. The turn's cancellable work (the model step, tool activities, the
// wait for a person) runs in a scope that Stop cancels; a child workflow is not cancelled (it is not torn
// apart mid-step), the turn only stops waiting for it. Pure apart from the scope the workflow gives
// (a Temporal CancellationScope); plainScope stands in for it in tests without a worker.
import type { DecisionInput, DecisionName, PendingItem } from '../shared/messages.ts';
import type { StoppedStep } from '../shared/turn-control.ts';
import { serverCallStopped } from '../shared/stopped-call.ts';

/** What Stop cancels: work run in it fails once it is cancelled, and so does work started after. */
export interface TurnScope {
  run<T>(fn: () => Promise<T>): Promise<T>;
  cancel(): void;
}

/** Thrown inside the turn loop once Stop was asked for: the turn ends as stopped, whatever it was doing. */
export class TurnStopped extends Error {
  constructor() {
    super('The user stopped the turn.');
    this.name = 'TurnStopped';
  }
}

/** A scope of plain promises (tests): run() races its work against cancel(). */
export function plainScope(): TurnScope {
  let cancel!: () => void;
  const cancelled = new Promise<never>((_, reject) => (cancel = () => reject(new TurnStopped())));
  cancelled.catch(() => undefined);
  let isCancelled = false;
  return {
    run: (fn) => (isCancelled ? Promise.reject(new TurnStopped()) : Promise.race([fn(), cancelled])),
    cancel: () => {
      isCancelled = true;
      cancel();
    },
  };
}

/** What a stopped model step wrote before it let go, from its cancellation's details; undefined if none came. */
export function stoppedStepOf(error: unknown): StoppedStep | undefined {
  for (
    let cause = error as { message?: unknown; details?: unknown; cause?: unknown } | undefined;
    cause;
    cause = cause.cause as typeof cause
  ) {
    if (typeof cause !== 'object') return undefined;
    // The server keeps a cancellation's details but not its message: the details' shape is what says so.
    if (Array.isArray(cause.details)) {
      const found = cause.details[0] as StoppedStep | undefined;
      if (found && Array.isArray(found.before)) return found;
    }
  }
  return undefined;
}

/**
 * Why a turn ended before its time: the person pressed Stop, or the conversation moved to another branch (an
 * edit, a regenerate or a version switch left the parked turn behind). Each says so in its own words.
 */
export type TurnEnd = 'stop' | 'branch';

/** The reason an item left behind on another branch closes with (the web reads "another branch" in it). */
export const BRANCH_LEFT = 'withdrawn: the conversation moved to another branch';

/** How Stop (or a branch move) closes an item still open: the refusal its kind allows (reject, no), else its timeout rule. */
export function withdrawal(
  item: { id: string; decisions: readonly DecisionName[] },
  onTimeout: DecisionName,
  end: TurnEnd = 'stop',
): DecisionInput {
  const decision = item.decisions.includes('reject') ? 'reject' : item.decisions.includes('no') ? 'no' : onTimeout;
  return { pendingId: item.id, decision, reason: end === 'branch' ? BRANCH_LEFT : 'The user pressed Stop; the turn ended.' };
}

/**
 * The tool message for a call the turn never answered because Stop ended it: a child workflow goes on by
 * itself; a call an MCP server was working on may have completed there (its activity records the same words);
 * anything else did not run.
 */
export function stoppedCallResult(
  childRunning: boolean,
  serverRunning = false,
  end: TurnEnd = 'stop',
): { status: 'stopped'; error: string } {
  // an MCP call's activity records Stop's words itself when it is cancelled: the transcript says the same
  if (serverRunning) return serverCallStopped();
  const what = end === 'branch' ? 'the conversation moved to another branch' : 'the user pressed Stop';
  return {
    status: 'stopped',
    error: childRunning
      ? `${what[0]!.toUpperCase()}${what.slice(1)} while this ran as a workflow of its own; it finishes on its own, and its result is not part of this conversation.`
      : `Not run: ${what}.`,
  };
}
